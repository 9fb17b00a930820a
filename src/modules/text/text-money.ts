import type { Kysely, Transaction } from 'kysely';
import { GroupCommit } from '../../db/group-commit.ts';
import { rowInserter } from '../../db/prepared.ts';
import type { Database } from '../../db/types.ts';
import { applyMany } from '../billing/ledger.ts';
import { asLedgerOp, HOLD_COLUMNS, HoldAlreadySettled, holdsOf, repeatedSettles, settlesOf, USAGE_COLUMNS, type TextMoneyOp, type TextSettle } from './text-money-ops.ts';
import { writeTextMoneyWhole } from './text-money-whole.ts';

export type { TextMoneyOp } from './text-money-ops.ts';

// The money of synchronous text calls: a hold before the upstream call, a settlement (refund of
// the unused part plus the usage row) after it. Both are group-committed, so concurrent calls share
// their commits. Each hold also gets a `text_holds` row for as long as its call runs: a settlement
// refunds only when it is the one that deletes that row, so a hold given back by the sweeper
// (text-holds.ts: its process died mid-call) is never given back twice.

const insertUsage = rowInserter('usage', USAGE_COLUMNS);
const insertHolds = rowInserter('text_holds', HOLD_COLUMNS);

/** Deletes the open holds of these calls: the ids it deleted (the settlements entitled to refund). */
async function takeOpenHolds(trx: Transaction<Database>, callIds: string[]): Promise<Set<string>> {
  if (callIds.length === 0) return new Set();
  const rows = await trx.deleteFrom('text_holds').where('call_id', 'in', callIds).returning('call_id').execute();
  return new Set(rows.map((r) => r.call_id));
}

/** The careful path: op by op in one transaction (also what decides each 402 when a batch is refused whole). */
export async function writeTextMoneyCarefully(trx: Transaction<Database>, ops: TextMoneyOp[]): Promise<(Error | undefined)[]> {
  const repeated = repeatedSettles(ops);
  const open = await takeOpenHolds(trx, settlesOf(ops).map((op) => op.callId));
  const live = ops.filter((op) => op.kind === 'hold' || (open.has(op.callId) && !repeated.has(op)));
  // One pass over holds and settlements together, so every row is locked in the ledger's one order.
  const failures = await applyMany(trx, live.map(asLedgerOp));
  const outcome = new Map(live.map((op, i) => [op, failures[i]]));
  await insertHolds(trx, holdsOf(live.filter((_, i) => !failures[i])).map((op) => op.hold));
  await insertUsage(trx, settlesOf(live).map((op) => op.usage));
  return ops.map((op) => (outcome.has(op) ? outcome.get(op) : new HoldAlreadySettled((op as TextSettle).callId)));
}

export function textMoney(db: Kysely<Database>, parallel: number, committed: (keyIds: string[]) => void): GroupCommit<TextMoneyOp> {
  const keysOf = (ops: TextMoneyOp[]) => committed(ops.map((op) => op.movement.keyId!).filter(Boolean));
  return new GroupCommit(db, parallel, writeTextMoneyCarefully, keysOf, writeTextMoneyWhole(db));
}
