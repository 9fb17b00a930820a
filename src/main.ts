import cluster from 'node:cluster';
import { pathToFileURL } from 'node:url';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createContext, type AppContext } from './context.ts';
import { ensureDemoAccount, type DemoAccount } from './modules/accounts/demo.ts';
import { migrateDatabase } from './db/migrations.ts';
import { ensureSimulatorChannel } from './modules/channels/channels.service.ts';
import { allModelIds } from './core/catalog/models.ts';
import { startWorkers } from './modules/tasks/engine.ts';
import { startTracing, stopTracing } from './lib/tracing.ts';

const SHUTDOWN_GRACE_MS = 15_000;

function printWelcome(config: Readonly<Config>, demo: DemoAccount | undefined): void {
  const base = config.publicBaseUrl;
  const operator = config.adminToken ? 'operators sign in with ADMIN_TOKEN' : 'set ADMIN_TOKEN to sign in as the operator';
  if (!demo) {
    console.log(`Gateway listening on ${base}. Make a key: "npm run gateway -- keys create --user <user id> --unlimited" or POST /admin/keys.`);
    console.log(`Console: ${base}/console/ (${operator}).`);
    return;
  }
  console.log(
    [
      '',
      'A demo account with $10 and an API key was created. The key is shown only this once:',
      '',
      `    ${demo.key}`,
      '',
      'Try it:',
      `    curl -s ${base}/v1/balance -H "Authorization: Bearer ${demo.key}"`,
      '',
      `Console: ${base}/console/ - sign in as ${demo.consoleEmail} with password ${demo.consolePassword}`,
      `(${operator}).`,
      '',
    ].join('\n'),
  );
}

/** SIGTERM/SIGINT: stop accepting, finish in-flight requests and jobs (bounded), hand back leases. */
function onShutdown(ctx: AppContext, steps: (() => Promise<void>)[]): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      ctx.logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    try {
      for (const step of steps) await step();
      await ctx.close();
      await stopTracing();
    } catch (err) {
      ctx.logger.error({ err }, 'error during shutdown');
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

async function prepare(config: Readonly<Config>): Promise<AppContext> {
  await startTracing();
  const ctx = await createContext(config);
  ctx.metrics.collectProcessMetrics();
  await ensureSimulatorChannel(ctx.db, allModelIds());
  return ctx;
}

/** Job workers and the sweeper of text holds whose process died: what a process with workers runs besides HTTP. */
function startBackground(ctx: AppContext) {
  const workers = startWorkers(ctx);
  ctx.textMoney.start();
  ctx.callLog.start();
  return workers;
}

/** Why the port could not be opened, naming the variable to change (the start's one line). */
function listenFailure(config: Readonly<Config>, err: NodeJS.ErrnoException): Error {
  const at = `${config.host}:${config.port}`;
  if (err.code === 'EADDRINUSE') return new Error(`PORT: ${at} is in use by another process`);
  if (err.code === 'EACCES') return new Error(`PORT: no permission to listen on ${at}`);
  return new Error(`HOST: cannot listen on ${at} (${err.message})`);
}

/** HTTP and, unless WORKERS=0, background workers in one process. */
export async function serve(config: Readonly<Config>): Promise<void> {
  const ctx = await prepare(config);
  const app = await buildApp(ctx);
  const workers = config.workers > 0 ? startBackground(ctx) : undefined;
  await app.listen({ port: config.port, host: config.host }).catch((err) => {
    throw listenFailure(config, err);
  });
  printWelcome(config, await ensureDemoAccount(ctx));
  // server.close() waits for keep-alive sockets; close each one as soon as its response is done.
  const closeHttp = async () => {
    const reaper = setInterval(() => app.server.closeIdleConnections(), 50);
    try {
      await app.close();
    } finally {
      clearInterval(reaper);
    }
  };
  onShutdown(ctx, [closeHttp, async () => workers?.stop(SHUTDOWN_GRACE_MS - 5000)]);
}

/** Background workers only: `gateway worker`. */
export async function work(config: Readonly<Config>): Promise<void> {
  const ctx = await prepare(config);
  const workers = startBackground(ctx);
  console.log('Gateway workers running (no HTTP). Stop with SIGTERM.');
  onShutdown(ctx, [() => workers.stop(SHUTDOWN_GRACE_MS - 5000)]);
}

/**
 * CLUSTER=N (or `auto`, one per core): a primary forks N processes that share the port; a process
 * that dies is replaced; SIGTERM is passed on and the primary exits when all have stopped.
 */
export async function serveCluster(config: Readonly<Config>): Promise<void> {
  if (!cluster.isPrimary) return serve(config);
  // Migrate once, before the processes start, so they never race each other for it.
  await migrateDatabase(config.databaseUrl);
  let stopping = false;
  for (let i = 0; i < config.cluster; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    console.error(`gateway process ${worker.process.pid} exited (${signal ?? code}); starting another`);
    cluster.fork();
  });
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

export function configOrExit(): Readonly<Config> {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}

export function start(config: Readonly<Config>): void {
  (config.cluster > 0 ? serveCluster(config) : serve(config)).catch((err) => {
    console.error('failed to start:', err instanceof Error ? err.message : err);
    process.exit(1);
  });
}

// Started as the program itself (tsx src/main.ts, node dist/server/main.js), not when bundled into the CLI.
const entry = process.argv[1] ?? '';
if (import.meta.url === pathToFileURL(entry).href && /main\.[jt]s$/.test(entry)) start(configOrExit());
