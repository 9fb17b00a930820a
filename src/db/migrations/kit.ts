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

/**
 * SQLite: rebuilds `table` as it is minus the given column CHECK clauses (its rows and indexes
 * kept). Foreign keys are off meanwhile: other tables reference it, and dropping it would otherwise
 * delete-check their rows.
 */
export async function withoutChecks(db: Kysely<any>, table: string, checks: string[]): Promise<void> {
  const { rows } = await sql<{ type: string; sql: string }>`select type, sql from sqlite_master where tbl_name = ${table} and sql is not null`.execute(db);
  let create = rows.find((r) => r.type === 'table')!.sql;
  for (const check of checks) create = create.replace(` check (${check})`, '');
  const rebuilt = `${table}_rebuilt`;
  await sql.raw('pragma foreign_keys = off').execute(db);
  try {
    await sql.raw('begin').execute(db);
    await sql.raw(create.replace(/^CREATE TABLE( IF NOT EXISTS)? "?\w+"?/i, `CREATE TABLE "${rebuilt}"`)).execute(db);
    await sql.raw(`insert into "${rebuilt}" select * from "${table}"`).execute(db);
    await sql.raw(`drop table "${table}"`).execute(db);
    await sql.raw(`alter table "${rebuilt}" rename to "${table}"`).execute(db);
    for (const index of rows.filter((r) => r.type === 'index')) await sql.raw(index.sql).execute(db);
    await sql.raw('commit').execute(db);
  } catch (err) {
    await sql.raw('rollback').execute(db);
    throw err;
  } finally {
    await sql.raw('pragma foreign_keys = on').execute(db);
  }
}
