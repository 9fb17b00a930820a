import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../db.ts';

// Each migration takes the dialect, so the few differences (auto-increment ids) stay in one place.
// Migrations build on `Kysely<any>`: they describe the tables as they were then, not as types.ts has them now.
export type DialectMigration = (dialect: Dialect) => Migration;

export const idColumn = (dialect: Dialect) => (dialect === 'postgres' ? 'bigserial' : 'integer');

/** SQLite: rebuilds `table` as it is, minus AUTOINCREMENT (its rows, ids and indexes kept). */
export async function withoutAutoincrement(db: Kysely<any>, table: string): Promise<void> {
  const { rows } = await sql<{ type: string; sql: string }>`select type, sql from sqlite_master where tbl_name = ${table} and sql is not null`.execute(db);
  const create = rows.find((r) => r.type === 'table')!.sql;
  const rebuilt = `${table}_rebuilt`;
  await sql.raw(create.replace(/^CREATE TABLE( IF NOT EXISTS)? "?\w+"?/i, `CREATE TABLE "${rebuilt}"`).replace(/ autoincrement/i, '')).execute(db);
  await sql.raw(`insert into "${rebuilt}" select * from "${table}"`).execute(db);
  await sql.raw(`drop table "${table}"`).execute(db);
  await sql.raw(`alter table "${rebuilt}" rename to "${table}"`).execute(db);
  for (const index of rows.filter((r) => r.type === 'index')) await sql.raw(index.sql).execute(db);
  await sql`delete from sqlite_sequence where name = ${table}`.execute(db);
}
