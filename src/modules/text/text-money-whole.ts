import type { Kysely } from 'kysely';
import { atOnceFor } from '../../db/at-once.ts';
import { namedStatementsOf } from '../../db/index.ts';
import type { Database } from '../../db/types.ts';
import { applyAllAtOnce } from '../billing/ledger-at-once.ts';
import { ledgerRowsAllFound, ledgerMovementCtes } from '../billing/ledger-statement.ts';
import type { LedgerOp } from '../billing/ledger.ts';
import { assertAmount } from '../billing/ledger-rows.ts';
import type { TextMoneyOp } from './text-money.ts';

// A batch of text holds and settlements written whole, or not at all (the group commit then takes
// the careful path, op by op): on SQLite one synchronous transaction, on Postgres one statement
// outside BEGIN/COMMIT, a round trip instead of one per statement.

export const USAGE_COLUMNS = ['user_id', 'key_id', 'model', 'endpoint', 'request_id', 'input_tokens', 'output_tokens', 'cost', 'status', 'created_at'] as const;
const USAGE_TYPES = ['text', 'text', 'text', 'text', 'text', 'int', 'int', 'bigint', 'text', 'bigint'];
const USAGE_INSERT = `insert into usage (${USAGE_COLUMNS.join(', ')}) values (${USAGE_COLUMNS.map(() => '?').join(', ')})`;

const MOVEMENT_TYPES = ['text', 'text', 'text', 'int', 'bigint', 'text', 'text'];
const MOVEMENT_COLUMNS = 'kind, user_id, key_id, key_limited, amount, ref, note';
const NOW = `$${MOVEMENT_TYPES.length + USAGE_TYPES.length + 1}`;
const arrays = (types: string[], from: number) => types.map((type, i) => `$${from + i}::${type}[]`).join(', ');

export const TEXT_MONEY_STATEMENT = `
with movements as (
  select * from unnest(${arrays(MOVEMENT_TYPES, 1)}) as m(${MOVEMENT_COLUMNS})
  where not (kind = 'refund' and amount = 0)
),
${ledgerMovementCtes('movements', NOW)},
usage_in as (
  insert into usage (${USAGE_COLUMNS.join(', ')})
  select * from unnest(${arrays(USAGE_TYPES, MOVEMENT_TYPES.length + 1)})
)
select ${ledgerRowsAllFound('movements')} as ok`;

export const asLedgerOp = (op: TextMoneyOp): LedgerOp => (op.kind === 'hold' ? { op: 'debit', kind: 'hold', movement: op.movement } : { op: 'refund', movement: op.movement });

type Settle = Extract<TextMoneyOp, { kind: 'settle' }>;
const settlesOf = (ops: TextMoneyOp[]) => ops.filter((op): op is Settle => op.kind === 'settle');

export function writeTextMoneyWhole(db: Kysely<Database>): ((ops: TextMoneyOp[]) => Promise<void>) | undefined {
  const atOnce = atOnceFor(db);
  if (atOnce) {
    return async (ops) =>
      atOnce((statement) => {
        applyAllAtOnce(statement, ops.map(asLedgerOp));
        const usage = statement(USAGE_INSERT);
        for (const op of settlesOf(ops)) usage.run(...USAGE_COLUMNS.map((column) => op.usage[column]));
      });
  }
  const run = namedStatementsOf(db);
  if (!run) return undefined;
  return async (ops) => {
    const m = ops.map((op) => op.movement);
    for (const x of m) assertAmount(x.amount);
    const movements = [
      ops.map((op) => (op.kind === 'hold' ? 'hold' : 'refund')),
      m.map((x) => x.userId),
      m.map((x) => x.keyId ?? null),
      m.map((x) => (x.keyId && x.keyLimited ? 1 : 0)),
      m.map((x) => x.amount),
      m.map((x) => x.ref ?? null),
      m.map((x) => x.note ?? null),
    ];
    const settles = settlesOf(ops);
    const usage = USAGE_COLUMNS.map((column) => settles.map((op) => op.usage[column]));
    await run('gateway_text_money', TEXT_MONEY_STATEMENT, [...movements, ...usage, Date.now()]);
  };
}
