import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ROOT } from './lib.ts';

// The Portkey gateway from npm, installed into bench/.portkey (git-ignored) on first use and run on
// core 0 beside the other servers; bench/text.ts and bench/stream.ts compare against it.
const PORTKEY = path.join(ROOT, 'bench/.portkey');
export const PORTKEY_VERSION = '1.15.2';
const hasTaskset = spawnSync('which', ['taskset']).status === 0;

function installPortkey(): string {
  const entry = path.join(PORTKEY, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  if (!fs.existsSync(entry)) {
    fs.mkdirSync(PORTKEY, { recursive: true });
    fs.writeFileSync(path.join(PORTKEY, 'package.json'), '{"name":"portkey-bench","private":true}\n');
    execFileSync('npm', ['install', '--prefix', PORTKEY, '--no-audit', '--no-fund', `@portkey-ai/gateway@${PORTKEY_VERSION}`], { stdio: 'inherit' });
  }
  return entry;
}

async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on ${port}`);
}

/** Starts Portkey; resolves to its origin. */
export async function startPortkey(): Promise<string> {
  const port = 19900 + Math.floor(Math.random() * 90);
  const args = [installPortkey(), `--port=${port}`, '--headless'];
  const child = spawn(hasTaskset ? 'taskset' : process.execPath, hasTaskset ? ['-c', '0', process.execPath, ...args] : args, { env: { ...process.env, NODE_ENV: 'production' }, stdio: 'ignore' });
  process.on('exit', () => child.kill('SIGKILL'));
  await waitForPort(port);
  return `http://127.0.0.1:${port}`;
}

/** Portkey's headers for a messages-format upstream at `upstream`. */
export const portkeyMessagesHeaders = (upstream: string) => ({ 'x-portkey-provider': 'anthropic', 'x-portkey-custom-host': `${upstream}/v1`, 'x-api-key': 'upstream-key', 'anthropic-version': '2023-06-01' });
