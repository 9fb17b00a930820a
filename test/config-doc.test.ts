import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

// Every variable the configuration reads is in the README's configuration table, so an operator can
// find each one (src/config.ts is the one place the environment is read).

describe('the README configuration table', () => {
  it('names every variable src/config.ts reads', () => {
    const source = fs.readFileSync(new URL('../src/config.ts', import.meta.url), 'utf8');
    const read = new Set([...source.matchAll(/\(env, '([A-Z0-9_]+)'/g)].map((m) => m[1]!));
    const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Errors and limits'));
    expect(read.size).toBeGreaterThan(40);
    expect([...read].filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
  });
});
