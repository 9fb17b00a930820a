import type { Transaction } from 'kysely';
import { rowInserter } from '../../db/prepared.ts';
import type { Database } from '../../db/types.ts';
import { applyMany } from '../billing/ledger.ts';
import {
  asLedgerOp,
  HoldAlreadySettled,
  holdsOf,
  isFloatOp,
  repeatedSettles,
  settlesOf,
  usageOf,
  withRefund,
  type TextFloatOp,
  type TextMoneyOp,
  type TextSettle,
} from './ops.ts';
import { HOLD_COLUMNS, USAGE_COLUMNS } from './tables.ts';

// The careful path of the group commit (text-money.ts): a batch of text money's ops written op by op
// in one transaction, which also decides each 402 when the whole batch was refused (whole.ts). Each
// hold gets a `text_holds` row for as long as its call runs: a settlement refunds only when it is the
// one that deletes that row, so a hold given back by the sweeper (sweeper.ts: its process died
// mid-call) is never given back twice.

const insertUsage = rowInserter('usage', USAGE_COLUMNS);
const insertHolds = rowInserter('text_holds', HOLD_COLUMNS);

/** Deletes the open holds of these calls: the ids it deleted (the settlements entitled to refund). */
async function takeOpenHolds(trx: Transaction<Database>, callIds: string[]): Promise<Set<string>> {
  if (callIds.length === 0) return new Set();
  const rows = await trx.deleteFrom('text_holds').where('call_id', 'in', callIds).returning('call_id').execute();
  return new Set(rows.map((r) => r.call_id));
}

/** A float's row change, in the batch's order; the op as it goes on, or undefined when the float was gone. */
async function writeFloatRow(trx: Transaction<Database>, op: TextFloatOp): Promise<TextMoneyOp | undefined> {
  const float = trx.updateTable('text_holds').where('call_id', '=', op.callId);
  if (op.kind === 'spend') {
    const done = await float.set((eb) => ({ spent: eb('spent', '+', op.cost) })).executeTakeFirst();
    return done.numUpdatedRows === 1n ? op : undefined;
  }
  if (op.kind === 'release') {
    const { amount } = op.movement;
    const done = await float
      .set((eb) => ({ amount: eb('amount', '-', amount) }))
      .where((eb) => eb(eb('amount', '-', eb.ref('spent')), '>=', amount))
      .executeTakeFirst();
    return done.numUpdatedRows === 1n ? op : undefined;
  }
  const row = await trx
    .deleteFrom('text_holds')
    .where('call_id', '=', op.callId)
    .returning((eb) => eb('amount', '-', eb.ref('spent')).as('unspent'))
    .executeTakeFirst();
  return row ? withRefund(op, Number(row.unspent)) : undefined;
}

/** The careful path: op by op in one transaction (also what decides each 402 when a batch is refused whole). */
export async function writeTextMoneyCarefully(trx: Transaction<Database>, ops: TextMoneyOp[]): Promise<(Error | undefined)[]> {
  const repeated = repeatedSettles(ops);
  const open = await takeOpenHolds(trx, settlesOf(ops).map((op) => op.callId));
  const written = new Map<TextMoneyOp, TextMoneyOp>();
  for (const op of ops) if (op.kind === 'hold' || (op.kind === 'settle' && open.has(op.callId) && !repeated.has(op))) written.set(op, op);
  // Floats in one order (by id; one float's ops keep theirs): two batches in parallel on Postgres
  // would otherwise lock two floats' rows in opposite orders and deadlock.
  const floatOps = ops.filter(isFloatOp).sort((a, b) => (a.callId < b.callId ? -1 : a.callId > b.callId ? 1 : 0));
  for (const op of floatOps) {
    const went = await writeFloatRow(trx, op);
    if (went) written.set(op, went);
  }
  const live = ops.flatMap((op) => (written.has(op) ? [written.get(op)!] : []));
  // One pass over every movement together, so every row is locked in the ledger's one order.
  const moving = live.filter((op) => op.kind !== 'spend');
  const failures = await applyMany(trx, moving.flatMap(asLedgerOp));
  const failureOf = new Map<TextMoneyOp, Error | undefined>(moving.map((op, i) => [op, failures[i]]));
  await insertHolds(trx, holdsOf(live.filter((op) => !failureOf.get(op))).map((op) => op.hold));
  await insertUsage(trx, usageOf(live));
  return ops.map((op) => {
    const went = written.get(op);
    return went ? failureOf.get(went) : new HoldAlreadySettled((op as TextSettle).callId);
  });
}
