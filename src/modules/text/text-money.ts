import type { Insertable, Kysely, Transaction } from 'kysely';
import { GroupCommit } from '../../db/group-commit.ts';
import type { Database, UsageTable } from '../../db/types.ts';
import { debitMany, refundMany, type Movement } from '../billing/ledger.ts';

// The money of synchronous text calls: a hold before the upstream call, a settlement (refund of
// the unused part plus the usage row) after it. Both are group-committed, so concurrent calls share
// their commits.

export type TextMoneyOp = { kind: 'hold'; movement: Movement } | { kind: 'settle'; movement: Movement; usage: Insertable<UsageTable> };

async function writeTextMoney(trx: Transaction<Database>, ops: TextMoneyOp[]): Promise<(Error | undefined)[]> {
  const holds = ops.filter((op) => op.kind === 'hold');
  const holdFailures = await debitMany(trx, 'hold', holds.map((op) => op.movement));
  const settles = ops.filter((op): op is Extract<TextMoneyOp, { kind: 'settle' }> => op.kind === 'settle');
  await refundMany(trx, settles.map((op) => op.movement));
  for (let i = 0; i < settles.length; i += 500) await trx.insertInto('usage').values(settles.slice(i, i + 500).map((op) => op.usage)).execute();
  const failures = new Map<TextMoneyOp, Error | undefined>(holds.map((op, i) => [op, holdFailures[i]]));
  return ops.map((op) => failures.get(op));
}

export function textMoney(db: Kysely<Database>, parallel: number, committed: (keyIds: string[]) => void): GroupCommit<TextMoneyOp> {
  return new GroupCommit(db, parallel, writeTextMoney, (ops) => committed(ops.map((op) => op.movement.keyId!).filter(Boolean)));
}
