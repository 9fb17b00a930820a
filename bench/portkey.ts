import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ROOT } from './lib.ts';

// The Portkey gateway from npm, installed into a git-ignored folder under bench/ on first use and
// run on core 0 beside the other servers; bench/text.ts and bench/stream.ts compare against it.
export const PORTKEY_VERSION = process.env.PORTKEY_VERSION ?? '1.15.2';
const hasTaskset = spawnSync('which', ['taskset']).status === 0;

// Portkey asks for @hono/node-server ^1.3.3, so npm gives it the newest 1.x. From 1.14.2 on, that
// adapter's lightweight Response returns the very Headers of the Response it was built from; Portkey
// builds a streamed answer as `new Response(readable, upstreamResponse)` (src/handlers/streamHandler.ts
// line 411 at its tag v1.15.2) and then appends its x-portkey-* headers (src/handlers/services/
// responseService.ts line 105): on a fetch() answer's immutable headers that throws "TypeError:
// immutable", so every streamed call is a 500 (Portkey-AI/gateway issues 1389, 1550). Portkey's own
// package-lock.json has 1.13.5, under which it streams: the stream bench installs that one.
export const PORTKEY_STREAMING_HONO = process.env.PORTKEY_HONO_NODE_SERVER ?? '1.13.5';

export interface PortkeyInstall {
  version: string;
  /** Pins @hono/node-server through npm overrides; unset, npm picks as a plain install would. */
  honoNodeServer?: string;
}

export const portkeyLabel = (install: PortkeyInstall) => `Portkey gateway ${install.version}${install.honoNodeServer ? ` (@hono/node-server ${install.honoNodeServer})` : ''}`;

const installedVersion = (dir: string, pkg: string): string | undefined => {
  const file = path.join(dir, 'node_modules', pkg, 'package.json');
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version : undefined;
};

function installPortkey(install: PortkeyInstall): string {
  // A pinned install gets a folder of its own, so the unpinned one bench/text.ts uses stays as it is.
  const dir = path.join(ROOT, install.honoNodeServer ? 'bench/.portkey-stream' : 'bench/.portkey');
  const entry = path.join(dir, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  const current = installedVersion(dir, '@portkey-ai/gateway') === install.version && (!install.honoNodeServer || installedVersion(dir, '@hono/node-server') === install.honoNodeServer);
  if (!current) {
    fs.mkdirSync(dir, { recursive: true });
    const overrides = install.honoNodeServer ? { '@hono/node-server': install.honoNodeServer } : undefined;
    fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name: 'portkey-bench', private: true, overrides })}\n`);
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', `@portkey-ai/gateway@${install.version}`], { stdio: 'inherit' });
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

/** Starts Portkey; resolves to its origin and its process id (taskset execs node in place). */
export async function startPortkey(install: PortkeyInstall = { version: PORTKEY_VERSION }): Promise<{ url: string; pid: number }> {
  const port = 19900 + Math.floor(Math.random() * 90);
  const args = [installPortkey(install), `--port=${port}`, '--headless'];
  const child = spawn(hasTaskset ? 'taskset' : process.execPath, hasTaskset ? ['-c', '0', process.execPath, ...args] : args, { env: { ...process.env, NODE_ENV: 'production' }, stdio: 'ignore' });
  process.on('exit', () => child.kill('SIGKILL'));
  await waitForPort(port);
  return { url: `http://127.0.0.1:${port}`, pid: child.pid! };
}


/** Portkey's headers for a messages-format upstream at `upstream`. */
export const portkeyMessagesHeaders = (upstream: string) => ({ 'x-portkey-provider': 'anthropic', 'x-portkey-custom-host': `${upstream}/v1`, 'x-api-key': 'upstream-key', 'anthropic-version': '2023-06-01' });

/** The same for an OpenAI upstream (chat completions, Responses): the key as a Bearer token. */
export const portkeyOpenAIHeaders = (upstream: string) => ({ 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${upstream}/v1`, authorization: 'Bearer upstream-key' });
