import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import type { Database, Job } from '../../db/types.ts';
import { badRequest } from '../../core/errors.ts';
import { newId } from '../../lib/ids.ts';
import { toBalance, toCredits } from '../../lib/money.ts';
import type { JobHandler } from '../../jobs/runner.ts';
import { enqueue } from '../../jobs/jobs.repo.ts';
import { DONE, hostBusy, judge, postSigned, type DeliveryDeps } from './delivery.ts';
import { checkTarget } from '../../lib/net/target.ts';
import { attemptsInRound, recordAttempt, signingSecret } from './webhooks.repo.ts';
import { pendingSql } from '../text-money/index.ts';

// Low-balance alerts. Balances move in many places (holds, settlements, floats, top-ups),
// so rather than hook every one of them, workers look at the accounts that asked for an alert: an
// armed account whose balance is below its threshold is marked sent and gets one `balance.low`
// event, written with its delivery job in one transaction (a compare-and-set, so one process
// sends it); an account lifted to its threshold again is re-armed. The event goes through the
// callbacks' delivery: signed with the account's secret, retried, address-checked at every attempt.

export const BALANCE_LOW = 'balance.low';

/** Checks an alert target as callbacks are checked; a refusal is a 400 naming the reason. */
export async function acceptAlertUrl(ctx: Pick<AppContext, 'config' | 'resolve'>, url: string): Promise<string> {
  const verdict = await checkTarget(url, ctx.config, ctx.resolve);
  if (!verdict.ok) throw badRequest(`alert_url: ${verdict.reason}`);
  return url;
}

/** The accounts with an alert, their balance as the balance routes show it (what text money holds and has not spent added back). */
function watched(db: Kysely<Database>) {
  return db
    .selectFrom('users')
    .select((eb) => ['id', 'alert_below', 'alert_url', 'alert_sent', eb('balance', '+', pendingSql(eb, 'account', eb.ref('users.id'))).as('balance')])
    .where('alert_below', 'is not', null)
    .where('alert_url', 'is not', null)
    .execute();
}

export async function checkBalanceAlerts(ctx: Pick<AppContext, 'db' | 'logger' | 'wakeWorkers'>): Promise<number> {
  let raised = 0;
  for (const account of await watched(ctx.db)) {
    const balance = Number(account.balance);
    const below = Number(account.alert_below);
    if (account.alert_sent === 0 && balance < below) {
      const sent = await ctx.db.transaction().execute(async (trx) => {
        const armed = await trx.updateTable('users').set({ alert_sent: 1 }).where('id', '=', account.id).where('alert_sent', '=', 0).executeTakeFirst();
        if (armed.numUpdatedRows === 0n) return false;
        const id = newId('alert');
        await trx.insertInto('balance_alerts').values({ id, user_id: account.id, url: account.alert_url!, balance, threshold: below, created_at: Date.now() }).execute();
        await enqueue(trx, { kind: 'alert', taskId: id });
        return true;
      });
      if (sent) raised++;
    } else if (account.alert_sent === 1 && balance >= below) {
      await ctx.db.updateTable('users').set({ alert_sent: 0 }).where('id', '=', account.id).where('alert_sent', '=', 1).execute();
    }
  }
  if (raised > 0) {
    ctx.logger.info({ raised }, 'low-balance alerts raised');
    ctx.wakeWorkers();
  }
  return raised;
}

/** The `alert` job: one attempt per run, as the `deliver` job of task callbacks. */
export function alertDeliveryHandler(deps: DeliveryDeps): JobHandler {
  const { db, config } = deps;
  const delays = config.webhook.retryDelaysMs;
  return async (job: Job) => {
    const alert = await db.selectFrom('balance_alerts').selectAll().where('id', '=', job.task_id).executeTakeFirst();
    if (!alert) return DONE;
    const attempt = (await attemptsInRound(db, alert.id, 0)) + 1;
    if (attempt > delays.length + 1) return DONE;
    const record = { task_id: alert.id, round: 0, attempt, url: alert.url, at: Date.now() };
    const verdict = await checkTarget(alert.url, config, deps.resolve);
    if (!verdict.ok) {
      await recordAttempt(db, { ...record, status_code: null, error: `refused: ${verdict.reason}`, duration_ms: 0, outcome: 'refused' });
      deps.metrics.webhooks.inc({ outcome: 'refused' });
      return DONE;
    }
    const body = JSON.stringify({
      type: BALANCE_LOW,
      timestamp: new Date(alert.created_at).toISOString(),
      data: {
        user_id: alert.user_id,
        balance: toBalance(alert.balance, config),
        balance_credits: toCredits(alert.balance, config),
        alert_below: toBalance(alert.threshold, config),
      },
    });
    const secret = (await signingSecret(db, alert.user_id)) ?? '';
    const sent = await postSigned(deps, verdict.url, { id: `msg_${alert.id}`, body, secret });
    if (!sent) return hostBusy();
    const { status, error } = sent;
    const outcome = judge(status, attempt, delays.length + 1);
    await recordAttempt(db, { ...record, status_code: status ?? null, error, duration_ms: Date.now() - record.at, outcome });
    deps.metrics.webhooks.inc({ outcome: outcome === 'retry' ? 'retried' : outcome });
    deps.logger.info({ alert: alert.id, user: alert.user_id, attempt, status, error, outcome }, 'balance alert attempt');
    return outcome === 'retry' ? { retryAt: Date.now() + delays[attempt - 1]! } : DONE;
  };
}

/** Starts the periodic check; returns its stop. */
export function watchBalances(ctx: AppContext): () => void {
  let checking = false;
  const timer = setInterval(() => {
    // A slow check (a database away) is not stacked on: the next tick after it ends runs again.
    if (checking) return;
    checking = true;
    checkBalanceAlerts(ctx)
      .catch((err) => ctx.logger.error({ err }, 'balance alert check failed'))
      .finally(() => (checking = false));
  }, ctx.config.webhook.balanceAlertCheckMs);
  timer.unref();
  return () => clearInterval(timer);
}
