import type SQLite from 'better-sqlite3';
import { WholeBatchRefused } from './errors.ts';

/**
 * SQLite: runs `write` synchronously in one transaction on the write connection, with statements
 * prepared once per database. Nothing else can run in between (one turn of the event loop), so the
 * whole batch commits or, when `write` throws (a CHECK constraint refusing a debit), none of it.
 * Refuses to start while a Kysely transaction is open on that connection: better-sqlite3 would
 * otherwise nest it inside that transaction as a savepoint.
 */
export type AtOnce = <T>(write: (statement: Statement) => T) => T;
/** A statement of the write connection, prepared once per SQL text. */
export type Statement = (sql: string) => SQLite.Statement;

/** Made once per database, by createDb (db/index.ts). */
export function makeAtOnce(database: SQLite.Database): AtOnce {
  const statements = new Map<string, SQLite.Statement>();
  const statement = (sql: string) => {
    let found = statements.get(sql);
    if (!found) statements.set(sql, (found = database.prepare(sql)));
    return found;
  };
  // better-sqlite3 builds four wrapper functions for every transaction() call (~4 us a batch):
  // one wrapper is made here and takes the work as its argument.
  const inTransaction = database.transaction((write: Parameters<AtOnce>[0]) => write(statement));
  return (write) => {
    if (database.inTransaction) throw new WholeBatchRefused(new Error('a transaction is open on the write connection'));
    try {
      return inTransaction(write) as ReturnType<typeof write>;
    } catch (error) {
      // better-sqlite3 rolled the transaction back (also when COMMIT itself failed).
      throw new WholeBatchRefused(error);
    }
  };
}

/**
 * Rows written by multi-row INSERTs of a few fixed sizes, largest first, each SQL text prepared once
 * per database (a statement sized to each batch would be prepared anew every time), one flat
 * argument array per statement. `suffix` goes after the values (e.g. an ON CONFLICT clause).
 */
export function rowsInserter<R>(table: string, columns: readonly (keyof R & string)[], sizes: readonly number[], suffix = '') {
  const row = `(${columns.map(() => '?').join(', ')})`;
  const chunks = sizes.map((rows) => ({ rows, sql: `insert into ${table} (${columns.join(', ')}) values ${Array(rows).fill(row).join(', ')}${suffix}` }));
  return (statement: Statement, rows: readonly R[]): void => {
    let at = 0;
    for (const { rows: size, sql } of chunks) {
      while (rows.length - at >= size) {
        // Sized once (pushed, a 64-row batch of the call log grew its array ten times over).
        const args: unknown[] = new Array(size * columns.length);
        let k = 0;
        for (let i = at; i < at + size; i++) for (const column of columns) args[k++] = rows[i]![column];
        statement(sql).run(args);
        at += size;
      }
    }
  };
}
