import type { Kysely } from 'kysely';
import { atOnceFor } from '../../db/at-once.ts';
import { namedStatementsOf } from '../../db/index.ts';
import type { Database } from '../../db/types.ts';
import { applyAllAtOnce } from '../billing/ledger-at-once.ts';
import { ledgerRowsAllFound, ledgerMovementCtes } from '../billing/ledger-statement.ts';
import { assertAmount } from '../billing/ledger-rows.ts';
import { asLedgerOp, HOLD_COLUMNS, HoldAlreadySettled, holdsOf, repeatedSettles, settlesOf, USAGE_COLUMNS, type TextMoneyOp, type TextSettle } from './text-money-ops.ts';

// A batch of text holds and settlements written whole, or not at all (the group commit then takes
// the careful path, op by op): on SQLite one synchronous transaction, on Postgres one statement
// outside BEGIN/COMMIT, a round trip instead of one per statement. As on the careful path, a
// settlement refunds and writes its usage row only if it deleted its call's open hold.

const USAGE_TYPES = ['text', 'text', 'text', 'text', 'text', 'int', 'int', 'bigint', 'text', 'bigint'];
const HOLD_TYPES = ['text', 'text', 'text', 'int', 'bigint', 'text', 'text', 'text', 'bigint'];
const insertSql = (table: string, columns: readonly string[]) => `insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`;
const USAGE_INSERT = insertSql('usage', USAGE_COLUMNS);
const HOLD_INSERT = insertSql('text_holds', HOLD_COLUMNS);
const TAKE_HOLD = 'delete from text_holds where call_id = ?';

const MOVEMENT_TYPES = ['text', 'text', 'text', 'int', 'bigint', 'text', 'text'];
const MOVEMENT_COLUMNS = 'kind, user_id, key_id, key_limited, amount, ref, note';
const arrays = (types: string[], from: number) => types.map((type, i) => `$${from + i}::${type}[]`).join(', ');
const USAGE_FROM = MOVEMENT_TYPES.length + 1;
const SETTLED_CALLS = USAGE_FROM + USAGE_TYPES.length;
const HOLDS_FROM = SETTLED_CALLS + 1;
const NOW = `$${HOLDS_FROM + HOLD_TYPES.length}`;

export const TEXT_MONEY_STATEMENT = `
with taken as (
  delete from text_holds where call_id = any($${SETTLED_CALLS}::text[]) returning call_id
),
movements as (
  select * from unnest(${arrays(MOVEMENT_TYPES, 1)}) as m(${MOVEMENT_COLUMNS})
  where (kind = 'hold' or ref in (select call_id from taken)) and not (kind = 'refund' and amount = 0)
),
${ledgerMovementCtes('movements', NOW)},
usage_in as (
  insert into usage (${USAGE_COLUMNS.join(', ')})
  select ${USAGE_COLUMNS.join(', ')} from unnest(${arrays(USAGE_TYPES, USAGE_FROM)}, $${SETTLED_CALLS}::text[]) as u(${USAGE_COLUMNS.join(', ')}, call_id)
  where call_id in (select call_id from taken)
),
holds_in as (
  insert into text_holds (${HOLD_COLUMNS.join(', ')})
  select * from unnest(${arrays(HOLD_TYPES, HOLDS_FROM)})
)
select ${ledgerRowsAllFound('movements')} as ok, array(select call_id from taken) as taken`;

/** Per op: a settlement that did not take its call's open hold is refused; everything else went through. */
const outcomes = (ops: TextMoneyOp[], tookHold: (op: TextSettle) => boolean) => ops.map((op) => (op.kind === 'settle' && !tookHold(op) ? new HoldAlreadySettled(op.callId) : undefined));

type WriteWhole = (ops: TextMoneyOp[]) => Promise<(Error | undefined)[]>;

export function writeTextMoneyWhole(db: Kysely<Database>): WriteWhole | undefined {
  const atOnce = atOnceFor(db);
  if (atOnce) {
    return async (ops) =>
      atOnce((statement) => {
        const take = statement(TAKE_HOLD);
        // In order: of two settlements of one call in a batch, the second finds the row gone.
        const liveOps = ops.filter((op) => op.kind === 'hold' || take.run(op.callId).changes === 1);
        const live = new Set(liveOps);
        applyAllAtOnce(statement, liveOps.map(asLedgerOp));
        const hold = statement(HOLD_INSERT);
        const usage = statement(USAGE_INSERT);
        for (const op of liveOps) {
          if (op.kind === 'hold') hold.run(...HOLD_COLUMNS.map((column) => op.hold[column]));
          else usage.run(...USAGE_COLUMNS.map((column) => op.usage[column]));
        }
        return outcomes(ops, (op) => live.has(op));
      });
  }
  const run = namedStatementsOf(db);
  if (!run) return undefined;
  return async (all) => {
    const repeated = repeatedSettles(all);
    const ops = repeated.size ? all.filter((op) => !repeated.has(op)) : all;
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
    const holds = HOLD_COLUMNS.map((column) => holdsOf(ops).map((op) => op.hold[column]));
    const rows = (await run('gateway_text_money_v2', TEXT_MONEY_STATEMENT, [...movements, ...usage, settles.map((op) => op.callId), ...holds, Date.now()])) as { taken: string[] }[];
    const taken = new Set(rows[0]?.taken ?? []);
    return outcomes(all, (op) => taken.has(op.callId) && !repeated.has(op));
  };
}
