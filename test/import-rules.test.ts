import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// The direction of imports is dependency-cruiser's configuration (.dependency-cruiser.cjs); CI runs
// it on the code (npm run lint:imports). Here the same rules also meet a scratch tree that breaks
// each of them once, so a rule that stopped matching anything would be seen.

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'node_modules', '.bin', 'depcruise');
const config = path.join(root, '.dependency-cruiser.cjs');
const run = promisify(execFile);

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: unknown[];
}

async function cruise(cwd: string): Promise<Violation[]> {
  try {
    const { stdout } = await run(bin, ['src', '--config', config, '--output-type', 'json'], { cwd, maxBuffer: 64 * 1024 * 1024 });
    return (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
  } catch (err) {
    // depcruise exits non-zero when it finds violations; its JSON is still on stdout.
    const stdout = (err as { stdout?: string }).stdout;
    if (!stdout) throw err;
    return (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
  }
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-import-rules-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function write(file: string, imports: string[]): void {
  const full = path.join(scratch, file);
  fs.mkdirSync(path.dirname(full), { recursive: true });
  const lines = imports.map((target, i) => `import { x${i} } from '${path.relative(path.dirname(full), path.join(scratch, target)).replace(/^(?!\.)/, './')}';`);
  fs.writeFileSync(full, `${lines.join('\n')}\nexport const x = 1;\nexport { x as x0, x as x1 };\n`);
}

describe('the direction of imports', () => {
  it('holds on the code: no upward import, no cycle (type-only imports counted)', async () => {
    expect(await cruise(root)).toEqual([]);
  });

  it('refuses an upward import from each lower layer, and any cycle; the allowed directions pass', async () => {
    fs.copyFileSync(path.join(root, 'tsconfig.json'), path.join(scratch, 'tsconfig.json'));
    write('src/modules/rules/rules.ts', ['src/core/contract.ts', 'src/providers/registry.ts', 'src/db/db.ts']);
    write('src/modules/rules/vendor.ts', ['src/providers/openai/openai.text.ts']);
    write('src/providers/openai/openai.text.ts', ['src/core/contract.ts']);
    write('src/core/contract.ts', ['src/lib/helper.ts']);
    write('src/lib/helper.ts', []);
    write('src/core/upward.ts', ['src/modules/rules/rules.ts']);
    write('src/lib/upward.ts', ['src/db/db.ts']);
    write('src/db/db.ts', ['src/lib/helper.ts']);
    write('src/http/upward.ts', ['src/modules/rules/rules.ts']);
    write('src/providers/registry.ts', ['src/core/contract.ts', 'src/formats/codec.ts']);
    write('src/providers/upward.ts', ['src/modules/rules/rules.ts', 'src/db/db.ts', 'src/config.ts']);
    write('src/formats/codec.ts', ['src/core/contract.ts']);
    write('src/formats/upward.ts', ['src/providers/registry.ts']);
    write('src/config.ts', []);
    write('src/modules/a/one.ts', ['src/modules/a/two.ts']);
    write('src/modules/a/two.ts', ['src/modules/a/one.ts']);
    write('src/modules/entry.ts', ['src/app.ts']);
    write('src/app.ts', ['src/modules/rules/rules.ts']);
    const found = (await cruise(scratch)).map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
    expect(found).toEqual(
      [
        'core-is-neutral: src/core/upward.ts -> src/modules/rules/rules.ts',
        'core-is-neutral: src/lib/upward.ts -> src/db/db.ts',
        'formats-speak-formats: src/formats/upward.ts -> src/providers/registry.ts',
        'infrastructure-imports-no-module: src/http/upward.ts -> src/modules/rules/rules.ts',
        'modules-do-not-import-the-entry: src/modules/entry.ts -> src/app.ts',
        'modules-reach-providers-through-the-registry: src/modules/rules/vendor.ts -> src/providers/openai/openai.text.ts',
        'no-cycles: src/modules/a/one.ts -> src/modules/a/two.ts',
        'providers-speak-one-vendor: src/providers/upward.ts -> src/config.ts',
        'providers-speak-one-vendor: src/providers/upward.ts -> src/db/db.ts',
        'providers-speak-one-vendor: src/providers/upward.ts -> src/modules/rules/rules.ts',
      ].sort(),
    );
  });
});
