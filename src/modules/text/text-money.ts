import type { Insertable, Kysely, Transaction } from 'kysely';
import { GroupCommit } from '../../db/group-commit.ts';
import { rowInserter } from '../../db/prepared.ts';
import type { Database, UsageTable } from '../../db/types.ts';
import { applyMany, type Movement } from '../billing/ledger.ts';
import { asLedgerOp, USAGE_COLUMNS, writeTextMoneyWhole } from './text-money-whole.ts';

// The money of synchronous text calls: a hold before the upstream call, a settlement (refund of
// the unused part plus the usage row) after it. Both are group-committed, so concurrent calls share
// their commits.

export type TextMoneyOp = { kind: 'hold'; movement: Movement } | { kind: 'settle'; movement: Movement; usage: Insertable<UsageTable> };

const insertUsage = rowInserter('usage', USAGE_COLUMNS);

async function writeTextMoney(trx: Transaction<Database>, ops: TextMoneyOp[]): Promise<(Error | undefined)[]> {
  // One pass over holds and settlements together, so every row is locked in the ledger's one order.
  const failures = await applyMany(trx, ops.map(asLedgerOp));
  const settles = ops.filter((op): op is Extract<TextMoneyOp, { kind: 'settle' }> => op.kind === 'settle');
  await insertUsage(trx, settles.map((op) => op.usage));
  return failures;
}

export function textMoney(db: Kysely<Database>, parallel: number, committed: (keyIds: string[]) => void): GroupCommit<TextMoneyOp> {
  const keysOf = (ops: TextMoneyOp[]) => committed(ops.map((op) => op.movement.keyId!).filter(Boolean));
  return new GroupCommit(db, parallel, writeTextMoney, keysOf, writeTextMoneyWhole(db));
}
