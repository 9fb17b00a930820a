import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { apiDocument } from '../scripts/api-doc.ts';

describe('docs/api.md', () => {
  it('is what the route schemas produce (npm run docs:api), and cites no outside document', async () => {
    const written = fs.readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');
    expect(written).toBe(await apiDocument());
    expect(written).not.toMatch(/SPEC|DESIGN\.md|\.\.\/shared/);
  }, 60_000);
});
