import type { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';
import { createDb, type Db, type DbOptions } from './db/index.ts';
import { migrateToLatest } from './db/migrations.ts';
import { explainDatabaseError } from './db/outage.ts';
import { KeyCache } from './lib/key-cache.ts';
import { keyStore } from './modules/accounts/key-store.ts';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './lib/rate-limiter.ts';
import { connectRedis } from './lib/redis.ts';
import { Metrics } from './lib/metrics.ts';
import { SubmitBatcher } from './modules/tasks/submit-batcher.ts';
import { QuotaSnapshots } from './modules/balance/quota-snapshots.ts';
import { createTextMoney, type TextMoney } from './modules/text-money/index.ts';
import { CallLog } from './modules/calls/call-log.ts';
import { FileSigner, fileSigningSecret } from './blobs/signed-urls.ts';
import { RenderCache } from './blobs/render-cache.ts';
import { renderSpec } from './providers/simulator/render.ts';
import type { BlobStore } from './blobs/blob-store.ts';
import { createBlobStore } from './blobs/create-store.ts';
import { DEFAULT_PRICING_FILE, loadPricing, PricingError, type Pricing } from './modules/billing/pricing.ts';
import { GroupBook } from './modules/groups/group-book.ts';
import { PriceTable } from './modules/billing/price-table.ts';
import { ChannelRouter } from './modules/channels/channel-router.ts';
import { reviewedAssets } from './modules/avatars/avatars.repo.ts';
import { createProviders, createTextProviders } from './providers/index.ts';
import type { TextProvider } from './core/text/provider.ts';
import type { Channel } from './core/channel.ts';
import { allModelIds } from './core/catalog/models.ts';
import type { TaskProvider } from './core/task-provider.ts';
import type { Dispatcher } from 'undici';
import { safeDispatcher } from './lib/net/safe-dispatcher.ts';
import { systemResolver, type Resolver } from './lib/net/target.ts';
import { callbackUrlMaker } from './modules/upstream-callbacks/callback-token.ts';
import type { SessionReader } from './http/auth.ts';
import { consoleSessions } from './modules/console/session-guard.ts';

export interface AppContext {
  config: Readonly<Config>;
  /** The Kysely instance every repo takes, carrying its dialect and fast paths (db/db.ts). */
  db: Db;
  redis?: Redis;
  keyCache: KeyCache;
  rateLimiter: RateLimiter;
  logger: Logger;
  metrics: Metrics;
  pricing: Pricing;
  prices: PriceTable;
  /** Customer groups: what each account's calls pay (forGroup) and may use, re-read every second. */
  groups: GroupBook;
  /** Per-key balance snapshots, dropped after every commit that moves a key's money. */
  quotas: QuotaSnapshots;
  /** The money of text calls: their holds and settlements, and what open holds have not spent. */
  textMoney: TextMoney;
  /** The call log: rows queued in memory, written in batches (modules/calls/). */
  callLog: CallLog;
  /** Group commit for task submits (see modules/tasks/submit-batcher.ts). */
  submits: SubmitBatcher;
  channels: ChannelRouter;
  /** Result files: the store (local directory or S3), link signing, and simulated files rendered into the store. */
  files: { signer: FileSigner; store: BlobStore; renders: RenderCache };
  providerFor(type: string): TaskProvider | undefined;
  textProviderFor(channel: Channel): TextProvider | undefined;
  /** Resolves callback hosts (tests inject their own). */
  resolve: Resolver;
  /** The connection pool for callbacks: connects only to addresses that passed the rules. */
  webhookDispatcher: Dispatcher;
  /** Console sessions, for the admin guard (an operator's session opens the admin API). */
  sessions: SessionReader;
  /** Set by the job runner of this process, if it has one: runs newly enqueued jobs at once. */
  wakeWorkers(): void;
  close(): Promise<void>;
}

export interface ContextOptions {
  logger?: Logger;
  db?: DbOptions;
  /** Background listeners (key-cache poll, Redis subscription); off for one-shot CLI commands. */
  listen?: boolean;
}

/** Opens and migrates the database; a failure names DATABASE_URL and where it points. */
async function openDatabase(config: Readonly<Config>, logger: Logger, options: DbOptions = {}) {
  let opened: ReturnType<typeof createDb> | undefined;
  try {
    opened = createDb(config.databaseUrl, {
      poolSize: config.dbPoolSize,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      onConnectionError: (err) => logger.warn({ err: err.message }, 'a database connection failed; the next query opens another'),
      ...options,
    });
    await migrateToLatest(opened.db, opened.dialect, opened.schema);
    return opened;
  } catch (err) {
    await opened?.close().catch(() => {});
    throw explainDatabaseError(config.databaseUrl, err);
  }
}

export async function createContext(config: Readonly<Config>, options: ContextOptions = {}): Promise<AppContext> {
  const logger = options.logger ?? pino({ level: config.logLevel });
  const { db, dialect, schema, close: closeDb } = await openDatabase(config, logger, options.db);
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, 'main') : undefined;
  const subscriber = redis && options.listen !== false ? await connectRedis(config.redisUrl!, 'sub') : undefined;
  const keyCache = new KeyCache(keyStore(db), config.keyCachePollMs, redis, `${config.redisPrefix}key-changed`);
  const quotas = new QuotaSnapshots(db, redis, `${config.redisPrefix}quota-changed`);
  if (options.listen !== false) await keyCache.start(subscriber);
  if (subscriber) await quotas.listen(subscriber);
  const rateLimiter = redis ? new RedisRateLimiter(redis, `${config.redisPrefix}rl:`) : new MemoryRateLimiter();
  const pricing = loadPricing(config.pricingFile);
  pricing.assertCovers(allModelIds());
  const prices = new PriceTable(db, pricing, config.pricingFile);
  // The command line reads the table in force once, as the groups below; a server keeps re-reading both.
  await (options.listen !== false ? prices.start() : prices.sync());
  const groups = new GroupBook(db, pricing);
  await (options.listen !== false ? groups.start() : groups.sync());
  const fileSecret = await fileSigningSecret(db, config.fileUrlSecret);
  const signer = new FileSigner(fileSecret, config.publicBaseUrl);
  const providers = createProviders(config, pricing, { reviewed: reviewedAssets(db), upstreamCallbackUrl: callbackUrlMaker(config, fileSecret) });
  const store = createBlobStore(config);
  const textMoney = createTextMoney({ db, dialect, logger, config, committed: (keyIds) => quotas.changed(keyIds) });
  keyCache.onChanged((keyId) => textMoney.keyChanged(keyId));
  const ctx: AppContext = {
    config,
    db,
    redis,
    keyCache,
    rateLimiter,
    logger,
    metrics: new Metrics(),
    pricing,
    prices,
    groups,
    quotas,
    textMoney,
    callLog: new CallLog({ db, logger, days: config.callLogDays, store }),
    submits: new SubmitBatcher(db, dialect === 'sqlite' ? 1 : config.writeBatchesInFlight, (tasks) =>
      quotas.changed(tasks.map((t) => t.key_id)),
    ),
    channels: new ChannelRouter(db),
    files: { signer, store, renders: new RenderCache(store, renderSpec) },
    providerFor: providers,
    textProviderFor: createTextProviders(config),
    resolve: systemResolver,
    // The lookup goes through ctx.resolve at call time, so an injected resolver applies here too.
    webhookDispatcher: safeDispatcher((host) => ctx.resolve(host), config.webhook.allowPrivate, config.webhook.timeoutMs),
    sessions: consoleSessions({ db, config }),
    wakeWorkers() {},
    async close() {
      keyCache.stop();
      prices.stop();
      groups.stop();
      rateLimiter.close();
      subscriber?.disconnect();
      redis?.disconnect();
      await ctx.webhookDispatcher.close();
      await ctx.textMoney.stop();
      await ctx.callLog.stop();
      await closeDb();
      await store.close?.();
    },
  };
  // The file is the operator's to correct; a table set through the API (checked against the groups
  // when it was saved) is corrected through the API, so it must not keep the gateway from starting.
  const pastMaxima = groups.pastMaxima();
  if (pastMaxima && prices.source() === 'file') {
    await ctx.close();
    throw new PricingError(`PRICING_FILE ${config.pricingFile ?? DEFAULT_PRICING_FILE}: ${pastMaxima}`);
  }
  if (pastMaxima) logger.warn(`prices in force: ${pastMaxima}`);
  return ctx;
}
