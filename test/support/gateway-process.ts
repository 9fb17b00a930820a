import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

// Real gateway processes for black-box tests: crash tests, relays, several processes on one store.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface GatewayProcess {
  url: string;
  port: number;
  child: ChildProcess;
  output(): string;
  /** Sends the signal and waits for the exit; resolves with the exit code (null when killed). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const running = new Set<GatewayProcess>();

/** Starts `src/main.ts` (or another entry) with `env` and waits until /healthz answers. */
export async function startGateway(env: Record<string, string>, entry = 'src/main.ts', args: string[] = []): Promise<GatewayProcess> {
  const port = Number(env.PORT ?? (await freePort()));
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', GATEWAY_DEMO: '0', HOST: '127.0.0.1', PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const gateway: GatewayProcess = {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const code = await exited;
      running.delete(gateway);
      return code;
    },
  };
  running.add(gateway);
  const healthy = entry === 'src/main.ts' || args[0] === 'serve';
  const deadline = Date.now() + 60_000;
  while (healthy) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await request(`${gateway.url}/healthz`);
      await res.body.dump();
      if (res.statusCode === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await gateway.stop('SIGKILL');
      throw new Error(`gateway did not become healthy:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return gateway;
}

/** Kills every process this file started (afterAll hooks call it even when a test failed). */
export async function stopAllGateways(): Promise<void> {
  await Promise.all([...running].map((g) => g.stop('SIGKILL')));
}
