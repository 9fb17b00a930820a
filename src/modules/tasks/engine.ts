import type { AppContext } from '../../context.ts';
import { JobRunner } from '../../jobs/runner.ts';
import type { JobKind } from '../../db/types.ts';
import type { TaskEngineDeps } from './engine-deps.ts';
import { sweepDeadlines, taskHandlers } from './task-worker.ts';
import { enqueue } from '../../jobs/jobs.repo.ts';
import { deliveryHandler } from '../webhooks/delivery.ts';
import { HostSlots } from '../webhooks/host-slots.ts';
import { applyReview } from '../avatars/review.ts';
import { safeDispatcher } from '../../lib/net/safe-dispatcher.ts';
import { alertDeliveryHandler, watchBalances } from '../webhooks/balance-alerts.ts';
import { cancelAfterDeadline, cancelHandler } from './upstream-cancel.ts';

const SWEEP_DEADLINES_MS = 1000;

export function engineDeps(ctx: AppContext): TaskEngineDeps {
  return {
    db: ctx.db,
    logger: ctx.logger,
    pricing: ctx.pricing,
    pricingOf: (task) => ctx.groups.forAccount(task.user_id),
    channels: ctx.channels,
    providerFor: ctx.providerFor,
    // The callback is written with the ending, so a crash between the two loses nothing.
    async onEnded(trx, task, ending) {
      if (task.kind === 'avatar') await applyReview(trx, task, ending);
      if (ending.state === 'failed') await cancelAfterDeadline(trx, task, ending.code);
      if (task.webhook) await enqueue(trx, { kind: 'deliver', taskId: task.id });
    },
    afterEnded: (task) => ctx.quotas.changed([task.key_id]),
    admissionRetryMs: ctx.config.upstreamTasks.admissionRetryMs,
    results: {
      store: ctx.files.store,
      signer: ctx.files.signer,
      resultTtlSeconds: ctx.config.resultTtlSeconds,
      maxBytes: ctx.config.files.maxBytes,
      timeoutMs: ctx.config.upstreamTimeoutMs,
      retryDelaysMs: ctx.config.files.fetchRetryDelaysMs,
      callerDispatcher: safeDispatcher((host) => ctx.resolve(host), ctx.config.files.fetchAllowPrivate, ctx.config.upstreamTimeoutMs),
    },
  };
}

/** The background half of a process: job workers, and the sweepers of deadlines and files (text money sweeps its own: ctx.textMoney.start()). */
export function startWorkers(ctx: AppContext): { stop(graceMs?: number): Promise<void> } {
  const deps = engineDeps(ctx);
  const delivery = { db: ctx.db, config: ctx.config, logger: ctx.logger, metrics: ctx.metrics, resolve: (h: string) => ctx.resolve(h), dispatcher: ctx.webhookDispatcher, hosts: new HostSlots(ctx.config.webhookWorkers) };
  const cancel = cancelHandler(deps, { retryMs: ctx.config.upstreamTasks.maxPollMs, watchMs: ctx.config.upstreamTasks.cancelWatchMs });
  const handlers = { ...taskHandlers(deps), deliver: deliveryHandler(delivery), alert: alertDeliveryHandler(delivery), cancel };
  const timing = { pollMs: ctx.config.jobPollMs, leaseMs: ctx.config.jobLeaseMs };
  // Polls wait on the upstream (and on each other, to share one list call), so they get slots of
  // their own: with thousands of open tasks they would otherwise hold every slot dispatches need.
  // Callbacks wait on callers' receivers (up to WEBHOOK_TIMEOUT each attempt): in slots of their own
  // too, so one account's slow or hanging receiver never holds up the tasks of the others (and,
  // by host-slots.ts, never more than a quarter of the callback slots).
  const callbacks: JobKind[] = ['deliver', 'alert'];
  const runner = new JobRunner(ctx.db, ctx.db.dialect, ctx.logger, handlers, { ...timing, concurrency: ctx.config.workers, kinds: { except: ['poll', ...callbacks] } });
  const polls = new JobRunner(ctx.db, ctx.db.dialect, ctx.logger, handlers, { ...timing, concurrency: ctx.config.pollWorkers, kinds: { only: ['poll'] } });
  const deliveries = new JobRunner(ctx.db, ctx.db.dialect, ctx.logger, handlers, { ...timing, concurrency: ctx.config.webhookWorkers, kinds: { only: callbacks } });
  const runners = [runner, polls, deliveries];
  ctx.wakeWorkers = () => {
    for (const r of runners) r.wake();
  };
  for (const r of runners) r.start();
  const deadlines = setInterval(() => {
    sweepDeadlines(deps).catch((err) => ctx.logger.error({ err }, 'deadline sweep failed'));
  }, SWEEP_DEADLINES_MS);
  // Every process may sweep: deleting a file another sweeper deleted first is no error.
  const files = setInterval(() => {
    ctx.files.store.sweep().catch((err) => ctx.logger.error({ err }, 'file sweep failed'));
  }, ctx.config.files.sweepEveryMs);
  deadlines.unref();
  files.unref();
  const stopWatchingBalances = watchBalances(ctx);
  ctx.logger.info({ owner: runner.owner, concurrency: ctx.config.workers, polls: ctx.config.pollWorkers, callbacks: ctx.config.webhookWorkers }, 'workers started');
  return {
    async stop(graceMs) {
      clearInterval(deadlines);
      clearInterval(files);
      stopWatchingBalances();
      ctx.wakeWorkers = () => {};
      await Promise.all(runners.map((r) => r.stop(graceMs)));
    },
  };
}
