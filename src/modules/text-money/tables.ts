import type { Insertable } from 'kysely';
import type { TextHoldsTable, UsageTable } from '../../db/types.ts';

// The rows text money writes besides the ledger's, each described once: its columns in the table's
// order, with their Postgres types. The careful path's INSERTs, SQLite's multi-row INSERTs and the
// Postgres statement's UNNESTs all take their column lists from here, and a test holds each
// description to the migrated table on both databases (test/text-money-tables.test.ts).

export type PgType = 'text' | 'int' | 'bigint';
type Described<Row> = readonly (readonly [keyof Row & string, PgType])[];

/** Every column of `usage` but its generated `id`. */
export const USAGE_TABLE = [
  ['user_id', 'text'],
  ['key_id', 'text'],
  ['model', 'text'],
  ['endpoint', 'text'],
  ['request_id', 'text'],
  ['input_tokens', 'bigint'],
  ['output_tokens', 'bigint'],
  ['cost', 'bigint'],
  ['status', 'text'],
  ['created_at', 'bigint'],
  ['cache_read_tokens', 'bigint'],
  ['cache_write_tokens', 'bigint'],
  ['reasoning_tokens', 'bigint'],
  ['input_cost', 'bigint'],
  ['cache_read_cost', 'bigint'],
  ['cache_write_cost', 'bigint'],
  ['output_cost', 'bigint'],
] as const satisfies Described<Insertable<UsageTable>>;

/** Every column of `text_holds` but `spent`, which a new row leaves at its default, 0. */
export const HOLD_TABLE = [
  ['call_id', 'text'],
  ['user_id', 'text'],
  ['key_id', 'text'],
  ['key_limited', 'int'],
  ['amount', 'bigint'],
  ['model', 'text'],
  ['endpoint', 'text'],
  ['request_id', 'text'],
  ['created_at', 'bigint'],
] as const satisfies Described<Insertable<TextHoldsTable>>;

/** The movements the Postgres statement gives the ledger's CTEs, as billing/ledger-statement.ts names them. */
export const MOVEMENT_SOURCE = [
  ['kind', 'text'],
  ['user_id', 'text'],
  ['key_id', 'text'],
  ['key_limited', 'int'],
  ['amount', 'bigint'],
  ['ref', 'text'],
  ['note', 'text'],
] as const;

export const USAGE_COLUMNS = USAGE_TABLE.map(([name]) => name);
export const HOLD_COLUMNS = HOLD_TABLE.map(([name]) => name);
export const MOVEMENT_COLUMNS = MOVEMENT_SOURCE.map(([name]) => name);
export type MovementColumn = (typeof MOVEMENT_COLUMNS)[number];
