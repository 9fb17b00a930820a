import { request, type Dispatcher } from 'undici';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Database, Job } from '../../db/types.ts';
import type { JobHandler, JobOutcome } from '../../jobs/runner.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { getTask } from '../tasks/tasks.repo.ts';
import { taskRecordJson } from '../tasks/task-record.ts';
import { signatureHeaders } from './signing.ts';
import { checkTarget, type Resolver } from '../../lib/net/target.ts';
import { HOST_BUSY_WAIT_MS, type HostSlots } from './host-slots.ts';
import { attemptsInRound, recordAttempt, signingSecret } from './webhooks.repo.ts';

export interface DeliveryDeps {
  db: Kysely<Database>;
  config: Readonly<Config>;
  logger: Logger;
  metrics: Metrics;
  resolve: Resolver;
  dispatcher: Dispatcher;
  /** Each callback host's share of WEBHOOK_WORKERS in this process. */
  hosts: HostSlots;
}

export const DONE: JobOutcome = { done: true };

export type Outcome = 'delivered' | 'retry' | 'dropped' | 'failed' | 'refused';

// Delivery: a 2xx ends it; a timeout, a connection error, a 5xx (or a 3xx, never followed) is retried
// after each of the configured delays, then dropped; a 4xx ends it at once.
export function judge(status: number | undefined, attempt: number, maxAttempts: number): Outcome {
  if (status !== undefined && status >= 200 && status < 300) return 'delivered';
  if (status !== undefined && status >= 400 && status < 500) return 'failed';
  return attempt < maxAttempts ? 'retry' : 'dropped';
}

/** Retried later without counting an attempt: the host had its share of the callback slots. */
export const hostBusy = (): JobOutcome => ({ retryAt: Date.now() + HOST_BUSY_WAIT_MS });

/**
 * One signed POST (Standard Webhooks) to a checked address through the checked-address pool, in a
 * slot of the host's share; undefined, and nothing sent, when the host has its share already.
 */
export function postSigned(deps: Pick<DeliveryDeps, 'config' | 'dispatcher' | 'hosts'>, url: URL, message: { id: string; body: string; secret: string }) {
  return deps.hosts.within(url, () => post(deps, url, message));
}

async function post(deps: Pick<DeliveryDeps, 'config' | 'dispatcher'>, url: URL, message: { id: string; body: string; secret: string }) {
  let status: number | undefined;
  let error: string | null = null;
  try {
    const response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'generation-gateway-webhooks/1', ...signatureHeaders(message.secret, message.id, message.body) },
      body: message.body,
      dispatcher: deps.dispatcher,
      signal: AbortSignal.timeout(deps.config.webhook.timeoutMs),
    });
    status = response.statusCode;
    await response.body.dump().catch(() => undefined);
  } catch (err) {
    error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  }
  return { status, error };
}

/** The `deliver` job: one attempt per run; the job reschedules itself for the next one. */
export function deliveryHandler(deps: DeliveryDeps): JobHandler {
  const { db, config, metrics } = deps;
  const delays = config.webhook.retryDelaysMs;
  return async (job: Job) => {
    const task = await getTask(db, job.task_id);
    if (!task?.webhook || (task.status !== 'completed' && task.status !== 'failed')) return DONE;
    const round = task.webhook_round;
    const attempt = (await attemptsInRound(db, task.id, round)) + 1;
    if (attempt > delays.length + 1) return DONE;
    const record = { task_id: task.id, round, attempt, url: task.webhook, at: Date.now() };
    // Checked again at every attempt: the address rules may have changed, or the host's DNS.
    const verdict = await checkTarget(task.webhook, config, deps.resolve);
    if (!verdict.ok) {
      await recordAttempt(db, { ...record, status_code: null, error: `refused: ${verdict.reason}`, duration_ms: 0, outcome: 'refused' });
      metrics.webhooks.inc({ outcome: 'refused' });
      return DONE;
    }
    const body = taskRecordJson(task, config);
    const secret = (await signingSecret(db, task.user_id)) ?? '';
    const sent = await postSigned(deps, verdict.url, { id: `msg_${task.id}`, body, secret });
    if (!sent) return hostBusy();
    const { status, error } = sent;
    const outcome = judge(status, attempt, delays.length + 1);
    await recordAttempt(db, { ...record, status_code: status ?? null, error, duration_ms: Date.now() - record.at, outcome });
    metrics.webhooks.inc({ outcome: outcome === 'retry' ? 'retried' : outcome });
    deps.logger.info({ task: task.id, attempt, status, error, outcome }, 'callback attempt');
    return outcome === 'retry' ? { retryAt: Date.now() + delays[attempt - 1]! } : DONE;
  };
}
