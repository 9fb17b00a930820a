import type SQLite from 'better-sqlite3';
import { Kysely, type KyselyConfig } from 'kysely';
import type { AtOnce } from './at-once.ts';
import type { Database } from './types.ts';

export type Dialect = 'sqlite' | 'postgres';

/** Runs compiled SQL straight on the driver, skipping Kysely's per-query machinery (hot reads). */
export type RawReader = (sql: string, params: readonly unknown[]) => Promise<unknown[]>;

/**
 * Postgres only: runs a named (server-side prepared) statement on its own, outside any transaction.
 * An error the server reported comes back as WholeBatchRefused (nothing was kept); a lost
 * connection comes back as it is (the statement may have committed).
 */
export type NamedStatementRunner = (name: string, sql: string, params: readonly unknown[]) => Promise<unknown[]>;

/** What one opened database can do beyond Kysely; each fast path is there only on its dialect. */
export interface Capabilities {
  dialect: Dialect;
  rawReader: RawReader;
  /** Postgres only. */
  namedStatements?: NamedStatementRunner;
  /**
   * SQLite only: the write connection itself, for hot writes done synchronously in one transaction
   * without Kysely's per-statement machinery. Use it only through `atOnce`.
   */
  sqliteWriter?: SQLite.Database;
  /** SQLite only: a batch written synchronously in one transaction on the writer (db/at-once.ts). */
  atOnce?: AtOnce;
}

/**
 * The database as createDb opened it: the Kysely instance every repo already takes, carrying its
 * dialect and fast paths (the model is atproto PDS's `Database`, which wraps Kysely; extending it
 * instead keeps every `db: Kysely<Database>` parameter as it is). A transaction or any other
 * derived instance is a plain Kysely without them, so a fast path asks `db instanceof Db` and
 * otherwise takes the ordinary way, which joins the caller's transaction.
 */
// Member names must not shadow Kysely's own (`schema` is its schema builder).
export class Db extends Kysely<Database> {
  readonly dialect: Dialect;
  readonly rawReader: RawReader;
  readonly namedStatements?: NamedStatementRunner;
  readonly sqliteWriter?: SQLite.Database;
  readonly atOnce?: AtOnce;

  constructor(config: KyselyConfig, capabilities: Capabilities) {
    super(config);
    this.dialect = capabilities.dialect;
    this.rawReader = capabilities.rawReader;
    this.namedStatements = capabilities.namedStatements;
    this.sqliteWriter = capabilities.sqliteWriter;
    this.atOnce = capabilities.atOnce;
  }
}

/** The SQLite database's `atOnce`; undefined on Postgres and on a transaction. */
export function atOnceFor(db: Kysely<Database>): AtOnce | undefined {
  return db instanceof Db ? db.atOnce : undefined;
}
