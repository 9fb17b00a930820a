import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

// The gateway command as tests run it. `bin/gateway.js` (what `npx gateway` runs) loads the sources
// through tsx, ~2 s a command; a file that runs dozens of commands runs the same src/cli.ts bundled
// once, as `npm run gateway` does (~1 s a command). The bundle goes under node_modules/.cache, where
// its packages resolve as from dist/server; the file's afterAll removes it (removeBundledCli).

const ROOT = path.resolve(import.meta.dirname, '../..');
let bundled: Promise<string> | undefined;

/** The path of src/cli.ts bundled for this test process (built at the first call). */
export function bundledCli(): Promise<string> {
  bundled ??= (async () => {
    const dir = path.join(ROOT, 'node_modules', '.cache', `gw-test-cli-${process.pid}`);
    await build({ entryPoints: [path.join(ROOT, 'src/cli.ts')], bundle: true, platform: 'node', format: 'esm', packages: 'external', target: 'node20', outdir: dir, logLevel: 'warning' });
    return path.join(dir, 'cli.js');
  })();
  return bundled;
}

export async function removeBundledCli(): Promise<void> {
  const made = bundled;
  bundled = undefined;
  if (made) fs.rmSync(path.dirname(await made), { recursive: true, force: true });
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `entry` (bin/gateway.js or the bundle) with `args` in the repository, LOG_LEVEL silent. */
export function runCli(entry: string, args: string[], env: Record<string, string | undefined>): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [entry, ...args], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'silent' } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
