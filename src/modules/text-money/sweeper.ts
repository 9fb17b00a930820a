import type { Kysely, Selectable } from 'kysely';
import type { Logger } from 'pino';
import type { GroupCommit } from '../../db/group-commit.ts';
import type { Database, TextHoldsTable } from '../../db/types.ts';
import { NOTHING_USED } from '../../core/text/provider.ts';
import { movementOf, NO_COST, settleOp } from './call-money.ts';
import { FLOAT_ENDPOINT } from './floats.ts';
import { HoldAlreadySettled, type TextClose, type TextMoneyOp } from './ops.ts';

// A text call's hold stays open in `text_holds` until the call settles. When the process died
// mid-call (SIGKILL, OOM, a lost machine), nothing would settle it: the caller would stay charged
// the whole hold for an answer they never got. Holds older than any call can last are settled here
// as `lost`: refunded in full, with a usage row. The settlement path decides who settles a hold
// (whoever deletes its row), so a call that does finish late can never be refunded twice. A
// process's float (floats.ts) is closed the same way: what its calls spent stays charged.

const BATCH = 200;

export interface SweepDeps {
  db: Kysely<Database>;
  logger: Logger;
  commits: GroupCommit<TextMoneyOp>;
  maxAgeMs: number;
}

/** A float whose process died: its calls' spends stay charged (their usage rows are written), the rest goes back. */
const closeOp = (row: Selectable<TextHoldsTable>): TextClose => ({ kind: 'close', callId: row.call_id, movement: movementOf(row, 0, 'text float lost') });

export async function sweepLostHolds(deps: SweepDeps, now = Date.now()): Promise<number> {
  const rows = await deps.db.selectFrom('text_holds').selectAll().where('created_at', '<', now - deps.maxAgeMs).orderBy('created_at').limit(BATCH).execute();
  const outcomes = await Promise.allSettled(rows.map((row) => deps.commits.add(row.endpoint === FLOAT_ENDPOINT ? closeOp(row) : settleOp(row, NO_COST, NOTHING_USED, 'lost'))));
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected' && !(o.reason instanceof HoldAlreadySettled));
  if (failed) throw failed.reason;
  const settled = outcomes.filter((o) => o.status === 'fulfilled').length;
  if (settled > 0) deps.logger.warn({ settled }, 'gave back the holds of text calls whose process ended mid-call');
  return settled;
}

/** One sweep of a context's text money now, as its timer would run it. */
export const settleLostHolds = (ctx: { textMoney: { sweep(now?: number): Promise<number> } }, now?: number): Promise<number> => ctx.textMoney.sweep(now);

/** How often to look: a quarter of the age, within 0.2 s and a minute. */
export const sweepEveryMs = (maxAgeMs: number) => Math.min(60_000, Math.max(200, Math.floor(maxAgeMs / 4)));
