import type { Kysely } from 'kysely';
import { rowsInserter, type Statement } from '../../db/at-once.ts';
import { Db, atOnceFor } from '../../db/db.ts';
import type { Database } from '../../db/types.ts';
import { applyAllAtOnce } from '../billing/ledger-at-once.ts';
import { ledgerRowsAllFound, ledgerMovementCtes } from '../billing/ledger-statement.ts';
import { assertAmount } from '../billing/ledger-rows.ts';
import { MOVES_SQL } from '../billing/ledger-plan.ts';
import { WholeBatchRefused } from '../../db/errors.ts';
import { asLedgerOp, HoldAlreadySettled, holdsOf, isFloatOp, repeatedSettles, settlesOf, usageOf, withRefund, type TextHold, type TextMoneyOp, type TextSettle } from './ops.ts';
import { HOLD_COLUMNS, HOLD_TABLE, MOVEMENT_COLUMNS, MOVEMENT_SOURCE, USAGE_COLUMNS, USAGE_TABLE, type MovementColumn, type PgType } from './tables.ts';

// A batch of text holds and settlements written whole, or not at all (the group commit then takes
// the careful path, op by op): on SQLite one synchronous transaction, on Postgres one statement
// outside BEGIN/COMMIT, a round trip instead of one per statement. As on the careful path, a
// settlement refunds and writes its usage row only if it deleted its call's open hold.

const insertSql = (table: string, columns: readonly string[], rows = 1) =>
  `insert into ${table} (${columns.join(', ')}) values ${Array(rows).fill(`(${columns.map(() => '?').join(', ')})`).join(', ')}`;
const HOLD_INSERT = insertSql('text_holds', HOLD_COLUMNS);
const TAKE_HOLD = 'delete from text_holds where call_id = ?';
const SPEND = 'update text_holds set spent = spent + ? where call_id = ?';
const RELEASE = 'update text_holds set amount = amount - ? where call_id = ? and amount - spent >= ?';
const CLOSE = 'delete from text_holds where call_id = ? returning amount - spent as unspent';

// Usage rows go in with multi-row INSERTs of 32, 16, ... 1 rows (six statements, prepared once).
const insertUsage = rowsInserter<ReturnType<typeof usageOf>[number]>('usage', USAGE_COLUMNS, [32, 16, 8, 4, 2, 1]);

/**
 * SQLite: each op's own row change, in order; per op, the op as it goes on (to the ledger and
 * usage), or undefined when its hold was gone. Spends from one float are added up into one UPDATE,
 * written before anything else touches that float's row, so the order still holds.
 */
function writeRows(statement: Statement, ops: TextMoneyOp[]): (TextMoneyOp | undefined)[] {
  const written: (TextMoneyOp | undefined)[] = new Array(ops.length);
  const spends = new Map<string, { cost: number; at: number[] }>();
  const writeSpends = (callId: string) => {
    const pending = spends.get(callId);
    if (!pending) return;
    spends.delete(callId);
    const found = statement(SPEND).run(pending.cost, callId).changes === 1;
    for (const i of pending.at) written[i] = found ? ops[i] : undefined;
  };
  ops.forEach((op, i) => {
    if (op.kind === 'spend') {
      const pending = spends.get(op.callId) ?? { cost: 0, at: [] };
      pending.cost += op.cost;
      pending.at.push(i);
      spends.set(op.callId, pending);
      return;
    }
    if (op.kind !== 'hold') writeSpends(op.callId);
    written[i] = writeRowOf(statement, op);
  });
  for (const callId of [...spends.keys()]) writeSpends(callId);
  return written;
}

function writeRowOf(statement: Statement, op: Exclude<TextMoneyOp, { kind: 'spend' }>): TextMoneyOp | undefined {
  switch (op.kind) {
    case 'hold':
      return op;
    case 'settle':
      return statement(TAKE_HOLD).run(op.callId).changes === 1 ? op : undefined;
    case 'release':
      return statement(RELEASE).run(op.movement.amount, op.callId, op.movement.amount).changes === 1 ? op : undefined;
    case 'close': {
      const row = statement(CLOSE).get(op.callId) as { unspent: number } | undefined;
      return row ? withRefund(op, Number(row.unspent)) : undefined;
    }
  }
}

// Postgres: one array parameter per column, in the descriptions' order (tables.ts).
const arrays = (table: readonly (readonly [string, PgType])[], from: number) => table.map(([, type], i) => `$${from + i}::${type}[]`).join(', ');
const USAGE_FROM = MOVEMENT_SOURCE.length + 1;
const SETTLED_CALLS = USAGE_FROM + USAGE_TABLE.length;
const HOLDS_FROM = SETTLED_CALLS + 1;
const NOW = `$${HOLDS_FROM + HOLD_TABLE.length}`;

export const TEXT_MONEY_STATEMENT = `
with taken as (
  delete from text_holds where call_id = any($${SETTLED_CALLS}::text[]) returning call_id
),
movements as (
  select * from unnest(${arrays(MOVEMENT_SOURCE, 1)}) as m(${MOVEMENT_COLUMNS.join(', ')})
  where (kind = 'hold' or ref in (select call_id from taken)) and ${MOVES_SQL}
),
${ledgerMovementCtes('movements', NOW)},
usage_in as (
  insert into usage (${USAGE_COLUMNS.join(', ')})
  select ${USAGE_COLUMNS.join(', ')} from unnest(${arrays(USAGE_TABLE, USAGE_FROM)}, $${SETTLED_CALLS}::text[]) as u(${USAGE_COLUMNS.join(', ')}, call_id)
  where call_id in (select call_id from taken)
),
holds_in as (
  insert into text_holds (${HOLD_COLUMNS.join(', ')})
  select * from unnest(${arrays(HOLD_TABLE, HOLDS_FROM)})
)
select ${ledgerRowsAllFound('movements')} as ok, array(select call_id from taken) as taken`;

/** Per op: one that did not find its open hold is refused; everything else went through. */
const outcomes = (ops: TextMoneyOp[], foundHold: (op: TextMoneyOp, index: number) => boolean) =>
  ops.map((op, i) => (op.kind !== 'hold' && !foundHold(op, i) ? new HoldAlreadySettled(op.callId) : undefined));

type WriteWhole = (ops: TextMoneyOp[]) => Promise<(Error | undefined)[]>;

/** Each movement column's value for an op of the statement: a call's hold debits, its settlement refunds. */
const MOVEMENT_VALUES: Record<MovementColumn, (op: TextHold | TextSettle) => unknown> = {
  kind: (op) => (op.kind === 'hold' ? 'hold' : op.overrun ? 'overrun' : 'refund'),
  user_id: (op) => op.movement.userId,
  key_id: (op) => op.movement.keyId ?? null,
  key_limited: (op) => (op.movement.keyId && op.movement.keyLimited ? 1 : 0),
  amount: (op) => op.movement.amount,
  ref: (op) => op.movement.ref ?? null,
  note: (op) => op.movement.note ?? null,
};

export function writeTextMoneyWhole(db: Kysely<Database>): WriteWhole | undefined {
  const atOnce = atOnceFor(db);
  if (atOnce) {
    return async (ops) =>
      atOnce((statement) => {
        // In order: of two settlements of one call in a batch, the second finds the row gone.
        const written = writeRows(statement, ops);
        const live = written.filter((op): op is TextMoneyOp => op !== undefined);
        applyAllAtOnce(statement, live.flatMap(asLedgerOp));
        const hold = statement(HOLD_INSERT);
        for (const op of holdsOf(live)) hold.run(...HOLD_COLUMNS.map((column) => op.hold[column]));
        insertUsage(statement, usageOf(live));
        return outcomes(ops, (_, i) => written[i] !== undefined);
      });
  }
  const run = db instanceof Db ? db.namedStatements : undefined;
  if (!run) return undefined;
  return async (all) => {
    // The statement carries calls' own holds and settlements; a batch with a float's ops is written op by op.
    if (all.some(isFloatOp)) throw new WholeBatchRefused(new Error('a float op in the batch'));
    const repeated = repeatedSettles(all);
    const ops = (repeated.size ? all.filter((op) => !repeated.has(op)) : all) as (TextHold | TextSettle)[];
    for (const op of ops) assertAmount(op.movement.amount);
    const movements = MOVEMENT_COLUMNS.map((column) => ops.map(MOVEMENT_VALUES[column]));
    const settles = settlesOf(ops);
    const usage = USAGE_COLUMNS.map((column) => settles.map((op) => op.usage[column]));
    const holds = HOLD_COLUMNS.map((column) => holdsOf(ops).map((op) => op.hold[column]));
    const rows = (await run('gateway_text_money_v3', TEXT_MONEY_STATEMENT, [...movements, ...usage, settles.map((op) => op.callId), ...holds, Date.now()])) as { taken: string[] }[];
    const taken = new Set(rows[0]?.taken ?? []);
    return outcomes(all, (op) => taken.has((op as TextSettle).callId) && !repeated.has(op));
  };
}
