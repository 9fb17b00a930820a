import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { SqliteDialect, sql, type Kysely } from 'kysely';
import { OneSchemaPostgresDialect } from './schema-introspector.ts';
import type { Database } from './types.ts';
import { startCheckpointer } from './checkpointer.ts';
import { makeAtOnce } from './at-once.ts';
import { Db, type Dialect, type NamedStatementRunner } from './db.ts';
import { NotConnected, WholeBatchRefused, isStoreUnavailable } from './errors.ts';

export { Db, type Capabilities, type Dialect, type NamedStatementRunner, type RawReader } from './db.ts';

/** A database createDb opened: `db` is the Kysely instance with its capabilities. */
export interface OpenDb {
  db: Db;
  dialect: Dialect;
  /** The Postgres schema every connection uses, when not the default one. */
  schema?: string;
  close(): Promise<void>;
}

/** SQLite only: the write connection (tests tune it); the code itself writes through `atOnce`. */
export function sqliteWriterOf(db: Kysely<Database>): SQLite.Database | undefined {
  return db instanceof Db ? db.sqliteWriter : undefined;
}

export interface DbOptions {
  poolSize?: number;
  /** Postgres: how long to wait for a new connection (then the query fails, and the caller gets 503). */
  connectTimeoutMs?: number;
  /** Told of a connection that failed while nobody was using it (Postgres restarted, a backend killed). */
  onConnectionError?: (error: Error) => void;
  /** Postgres only: run every connection in this schema (tests use one fresh schema each). */
  schema?: string;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

// Ledger units and millisecond timestamps fit in a double (2^53), so bigint columns become numbers.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query afresh; preparing costs more than running a small query, so
 * statements are kept by their SQL text (a bounded, least-recently-added cache).
 */
function withStatementCache(database: SQLite.Database) {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (!statement) {
        statement = database.prepare(text);
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}

export function sqlitePath(url: string): string {
  const file = url.replace(/^sqlite:(\/\/)?/, '');
  return file === '' ? ':memory:' : file;
}

export function createDb(url: string, options: DbOptions = {}): OpenDb {
  if (url.startsWith('sqlite:')) {
    const file = sqlitePath(url);
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const database = new SQLite(file);
    // WAL lets readers run beside the single writer; the busy timeout lets several processes share a file.
    database.pragma('journal_mode = WAL');
    database.pragma('busy_timeout = 5000');
    database.pragma('synchronous = NORMAL');
    database.pragma('foreign_keys = ON');
    const cached = withStatementCache(database);
    // Hot reads go to a second, read-only connection: they never wait behind a write transaction,
    // and never see one that has not committed (WAL gives readers the last committed state).
    const reader = file === ':memory:' ? undefined : new SQLite(file, { readonly: true });
    reader?.pragma('busy_timeout = 5000');
    const reads = reader ? withStatementCache(reader) : cached;
    const db = new Db({ dialect: new SqliteDialect({ database: cached }) }, {
      dialect: 'sqlite',
      rawReader: async (text, params) => reads.prepare(text).all(...params),
      sqliteWriter: database,
      atOnce: makeAtOnce(database),
    });
    const checkpointer = file === ':memory:' ? undefined : startCheckpointer(file);
    return {
      db,
      dialect: 'sqlite',
      close: async () => {
        await checkpointer?.stop();
        await db.destroy();
        reader?.close();
      },
    };
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    types: pgTypes,
    options: options.schema ? `-c search_path=${options.schema}` : undefined,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 3000,
    // A dead peer (failover, a cut network) is noticed by TCP keepalive instead of hanging a query.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  keepAliveOnConnectionErrors(pool, options.onConnectionError ?? (() => {}));
  const schema = options.schema ?? schemaFromUrl(url);
  const db = new Db({ dialect: new OneSchemaPostgresDialect({ pool }) }, {
    dialect: 'postgres',
    rawReader: async (text, params) => (await pool.query(text, params as unknown[])).rows,
    namedStatements: namedStatementRunner(pool),
  });
  return { db, dialect: 'postgres', schema, close: () => db.destroy() };
}

function namedStatementRunner(pool: pg.Pool): NamedStatementRunner {
  return async (name, text, params) => {
    const client = await pool.connect().catch((error) => Promise.reject(new NotConnected(error)));
    let broken: Error | undefined;
    try {
      return (await client.query({ name, text, values: params as unknown[] })).rows;
    } catch (error) {
      if (isStoreUnavailable(error)) broken = error as Error;
      // The server answered with an error: the statement, run outside any transaction, kept nothing.
      throw error instanceof pg.DatabaseError ? new WholeBatchRefused(error) : error;
    } finally {
      client.release(broken);
    }
  };
}

/**
 * pg emits `error` on an idle pooled client whose connection dies, and on a checked-out client
 * between its queries; with no listener that error ends the process. Each one is reported and the
 * client dropped: the pool opens a new connection for the next query, once the server answers again.
 */
function keepAliveOnConnectionErrors(pool: pg.Pool, report: (error: Error) => void): void {
  pool.on('error', report);
  pool.on('connect', (client) => client.on('error', report));
}

export async function ping(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}

/** `?options=-c search_path=x` in a Postgres URL (how child processes in tests get their schema). */
function schemaFromUrl(url: string): string | undefined {
  const options = new URL(url).searchParams.get('options');
  return options ? /search_path=([\w]+)/.exec(options)?.[1] : undefined;
}
