import { CompiledQuery, PostgresAdapter, type Compilable, type Insertable, type Kysely } from 'kysely';
import type { Database } from './types.ts';
import { Db, type Dialect } from './db.ts';

/**
 * A query on the hot path, built and compiled once per database instead of on every request.
 * `build` receives placeholder values; the returned function runs the same SQL with real ones,
 * given in the order the builder used them.
 */
export function preparedQuery<Row, Params extends unknown[]>(build: (db: Kysely<Database>, ...placeholders: Params) => Compilable<Row>) {
  const texts: Partial<Record<Dialect, string>> = {};
  return async (db: Kysely<Database>, ...params: Params): Promise<Row[]> => {
    // The database itself reads on the driver directly; a transaction goes through Kysely.
    if (db instanceof Db) return (await db.rawReader((texts[db.dialect] ??= build(db, ...params).compile().sql), params)) as Row[];
    const text = (texts[flavourOf(db)] ??= build(db, ...params).compile().sql);
    return (await db.executeQuery(CompiledQuery.raw(text, params) as CompiledQuery<Row>)).rows;
  };
}

/**
 * Which SQL flavour a Kysely instance or transaction compiles to. Asked of the adapter: every
 * transaction is a new instance, so compiling a probe query per instance cost a compile per write.
 */
function flavourOf(db: Kysely<Database>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * A statement for a hot write path, compiled once per SQL flavour and run through Kysely (so it
 * joins the caller's transaction). `params` must follow the order the builder used.
 */
export function compiledStatement(build: (db: Kysely<Database>) => Compilable<unknown>) {
  const texts: Partial<Record<Dialect, string>> = {};
  return async (db: Kysely<Database>, params: unknown[]) => {
    const flavour = flavourOf(db);
    const text = (texts[flavour] ??= build(db).compile().sql);
    return db.executeQuery(CompiledQuery.raw(text, params));
  };
}

/**
 * Inserts rows into one table: a lone row (the common case of a single caller) through a statement
 * compiled once, more through multi-row INSERTs of at most `chunk` rows.
 */
export function rowInserter<T extends keyof Database & string>(table: T, columns: readonly (keyof Insertable<Database[T]> & string)[], chunk = 500) {
  const one = compiledStatement((db) => db.insertInto(table).values(Object.fromEntries(columns.map((c) => [c, null])) as never));
  return async (db: Kysely<Database>, rows: Insertable<Database[T]>[]): Promise<void> => {
    if (rows.length === 1) {
      const row = rows[0] as Record<string, unknown>;
      await one(db, columns.map((c) => row[c] ?? null));
      return;
    }
    for (let i = 0; i < rows.length; i += chunk) await db.insertInto(table).values(rows.slice(i, i + chunk) as never).execute();
  };
}
