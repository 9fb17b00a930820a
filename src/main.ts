import { pathToFileURL } from 'node:url';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createContext } from './context.ts';
import { ensureDemoAccount } from './modules/accounts/demo.ts';

const SHUTDOWN_GRACE_MS = 15_000;

export async function serve(config: Readonly<Config>): Promise<void> {
  const ctx = await createContext(config);
  ctx.metrics.collectProcessMetrics();
  const app = await buildApp(ctx);
  await app.listen({ port: config.port, host: config.host });
  const demo = await ensureDemoAccount(ctx);
  const base = config.publicBaseUrl;
  if (demo) {
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
      ].join('\n'),
    );
  } else {
    console.log(`Gateway listening on ${base}. Keys: "npm run gateway -- keys create --user <user id> --unlimited" or POST /admin/keys.`);
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const force = setTimeout(() => {
      ctx.logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    try {
      await app.close();
      await ctx.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
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

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  serve(configOrExit()).catch((err) => {
    console.error('failed to start:', err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
