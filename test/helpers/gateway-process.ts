import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

// Real gateway processes for black-box tests (several processes on one store, first start, graceful
// shutdown, crash recovery). Every process is started exactly as `npm start` starts it:
//
//     node --import tsx src/main.ts            (or another entry, e.g. src/cli.ts worker)
//
// in the repository root, with the test's environment. The helper picks a free port, waits until
// GET /healthz answers 200, records stdout and stderr, and stops the process with the signal the test
// chooses. Every process it starts is remembered, so `stopAllGateways()` in an afterAll hook kills
// whatever a failed test left running, and a last-resort exit hook kills them if the test runner dies.
//
//     const gw = await startGateway({ env: { ...database.env, ADMIN_TOKEN } });
//     const res = await gw.call('GET', '/v1/balance', { authorization: `Bearer ${key}` });
//     expect(await gw.stop('SIGTERM')).toEqual({ code: 0, signal: null });

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A port that is free right now (a child cannot listen on port 0 and tell us which port it got). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Variables for the child: a string sets it, `undefined` removes it from the inherited environment. */
export type ChildEnv = Record<string, string | undefined>;

export interface GatewayOptions {
  /**
   * Environment of the child, over `process.env` and the defaults below. DATABASE_URL is required
   * (pass `freshDatabase().env` or a temp SQLite URL): a child must never fall back to the default
   * `./data/gateway.db` of the repository, nor to the `public` schema of the Postgres in DATABASE_URL.
   *
   * Defaults: LOG_LEVEL=warn, GATEWAY_DEMO=0, HOST=127.0.0.1, PUBLIC_BASE_URL=http://127.0.0.1:<port>,
   * FILES_DIR=<a temp dir of its own, removed when the process ends; pass FILES_DIR to keep files
   * across a restart>. REDIS_URL is inherited from the test's environment unless set or removed here.
   */
  env: ChildEnv;
  /** Script to run, relative to the repository root. Default `src/main.ts`. */
  entry?: string;
  /** Arguments after the entry, e.g. `['worker']` for `src/cli.ts`. */
  args?: string[];
  /**
   * Port to serve on (also taken from env.PORT); default a free one, and a process that loses the
   * race for it to another process is started again on another.
   */
  port?: number;
  /** Wait until GET /healthz answers 200 before resolving. Default: true for src/main.ts and `serve`. */
  waitForHealth?: boolean;
  /** How long the start (and /healthz) may take. Default 30 s. */
  startTimeoutMs?: number;
}

export interface ExitStatus {
  /** Exit code, or null when a signal ended the process. */
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CallResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the body is JSON, otherwise the text. */
  body: any;
}

export interface GatewayProcess {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  pid: number;
  child: ChildProcess;
  /** FILES_DIR of the child. */
  filesDir: string;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** stdout and stderr interleaved as they arrived (for failure messages). */
  output(): string;
  /** Resolves when the process has ended (however it ended). */
  exited: Promise<ExitStatus>;
  /** Still running? */
  alive(): boolean;
  /** Resolves with the first match of `pattern` in stdout+stderr; rejects on timeout or exit. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** One HTTP request to this process; JSON bodies are sent and parsed for you. */
  call(method: string, urlPath: string, headers?: Record<string, string>, body?: unknown): Promise<CallResult>;
  /** Sends `signal` without waiting. */
  kill(signal?: NodeJS.Signals): void;
  /**
   * Sends `signal` (default SIGTERM) and waits for the exit. If the process is still running after
   * `timeoutMs` (default 20 s), it is SIGKILLed, so a hung shutdown fails its test instead of hanging it.
   */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<ExitStatus>;
}

const running = new Set<GatewayProcess>();

// If the test runner itself exits (a crash, a timeout), no gateway may outlive it.
process.once('exit', () => {
  for (const gateway of running) killTree(gateway.child, 'SIGKILL');
});

/** Kills the child and anything it forked (CLUSTER=N): the child leads its own process group. */
function killTree(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function childEnvironment(options: GatewayOptions, port: number, filesDir: string): Record<string, string> {
  const merged: ChildEnv = {
    ...process.env,
    LOG_LEVEL: 'warn',
    GATEWAY_DEMO: '0',
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    FILES_DIR: filesDir,
    ...options.env,
    PORT: options.env.PORT ?? String(port),
  };
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(merged)) if (value !== undefined) env[name] = value;
  return env;
}

/** Starts one gateway process; see GatewayOptions. Rejects (after killing it) if it does not come up. */
export async function startGateway(options: GatewayOptions): Promise<GatewayProcess> {
  if (!options.env.DATABASE_URL) throw new Error('startGateway: pass env.DATABASE_URL (freshDatabase().env or a temp sqlite: URL)');
  // env.PORT is passed on verbatim (a test of a bad PORT needs exactly that); `port` is the number.
  const fixed = options.port ?? (options.env.PORT === undefined ? undefined : Number(options.env.PORT));
  for (let attempt = 1; ; attempt++) {
    const port = fixed ?? (await freePort());
    try {
      return await launch(options, port);
    } catch (err) {
      // Another process took the free port between our check and the child's listen: try another.
      if (fixed === undefined && attempt < 3 && err instanceof StartError && /EADDRINUSE/.test(err.output)) continue;
      throw err;
    }
  }
}

export class StartError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(`${message}\n--- gateway output ---\n${output}`);
  }
}

async function launch(options: GatewayOptions, port: number): Promise<GatewayProcess> {
  const entry = options.entry ?? 'src/main.ts';
  const args = options.args ?? [];
  const ownFilesDir = options.env.FILES_DIR === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'gw-proc-files-')) : undefined;
  const env = childEnvironment(options, port, ownFilesDir ?? options.env.FILES_DIR!);
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so stop/kill reaches the processes a CLUSTER primary forks.
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => ((stdout += chunk), (output += chunk)));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => ((stderr += chunk), (output += chunk)));
  const exited = new Promise<ExitStatus>((resolve) => {
    const ended = (status: ExitStatus) => {
      running.delete(gateway);
      if (ownFilesDir) fs.rmSync(ownFilesDir, { recursive: true, force: true });
      resolve(status);
    };
    // 'exit' can come before the last output is read: wait for the pipes to close too (bounded, in
    // case a forked process still holds them).
    child.once('exit', (code, signal) => {
      const timer = setTimeout(() => ended({ code, signal }), 1000);
      child.once('close', () => (clearTimeout(timer), ended({ code, signal })));
    });
    child.once('error', (err) => {
      output += `\nspawn error: ${err.message}`;
      ended({ code: null, signal: null });
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const alive = () => child.exitCode === null && child.signalCode === null && child.pid !== undefined;

  const gateway: GatewayProcess = {
    url,
    port,
    pid: child.pid ?? -1,
    child,
    filesDir: env.FILES_DIR!,
    stdout: () => stdout,
    stderr: () => stderr,
    output: () => output,
    exited,
    alive,
    async waitForOutput(pattern, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = new RegExp(pattern.source, pattern.flags.replace('g', '')).exec(output);
        if (match) return match;
        if (!alive()) throw new StartError(`process exited before printing ${pattern}`, output);
        if (Date.now() > deadline) throw new StartError(`timed out waiting for ${pattern}`, output);
        await sleep(25);
      }
    },
    async call(method, urlPath, headers = {}, body) {
      const res = await request(`${url}${urlPath}`, {
        method: method as any,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.body.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: res.statusCode, headers: res.headers, body: parsed };
    },
    kill(signal = 'SIGTERM') {
      killTree(child, signal);
    },
    async stop(signal = 'SIGTERM', timeoutMs = 20_000) {
      // SIGKILL takes the whole group; other signals go to the process itself, as a supervisor's would.
      if (signal === 'SIGKILL') killTree(child, 'SIGKILL');
      else if (alive()) child.kill(signal);
      const timer = setTimeout(() => killTree(child, 'SIGKILL'), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
  running.add(gateway);

  const waitForHealth = options.waitForHealth ?? (entry === 'src/main.ts' || args[0] === 'serve');
  if (!waitForHealth) return gateway;
  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  for (;;) {
    if (!alive()) {
      const status = await exited;
      throw new StartError(`gateway exited during start (code ${status.code}, signal ${status.signal})`, output);
    }
    try {
      const res = await request(`${url}/healthz`, { headersTimeout: 2000, bodyTimeout: 2000 });
      await res.body.dump();
      if (res.statusCode === 200) return gateway;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await gateway.stop('SIGKILL');
      throw new StartError(`gateway did not answer /healthz on port ${port} in time`, output);
    }
    await sleep(50);
  }
}

/** Every process started by this module that is still running. */
export function runningGateways(): GatewayProcess[] {
  return [...running];
}

/** SIGKILLs every process this module started and waits for them (call it from afterAll). */
export async function stopAllGateways(): Promise<void> {
  await Promise.all([...running].map((gateway) => gateway.stop('SIGKILL')));
}
