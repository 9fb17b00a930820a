import { Migrator, type Kysely, type MigrationProvider } from 'kysely';
import { createDb, type OpenDb, type Dialect } from './index.ts';
import type { Database } from './types.ts';
import { migrations } from './migrations/index.ts';
import { explainDatabaseError } from './outage.ts';

// Runs the migrations of migrations/ (one file each, listed in order by migrations/index.ts).

export async function migrateToLatest(db: Kysely<Database>, dialect: Dialect, schema?: string): Promise<string[]> {
  const provider: MigrationProvider = {
    async getMigrations() {
      return Object.fromEntries(Object.entries(migrations).map(([name, make]) => [name, make(dialect)]));
    },
  };
  const migrator = new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
  // Kysely takes no lock on SQLite: two processes starting together on a new file can both try.
  // Each migration runs in a transaction, so the loser rolls back; it then finds the work done.
  // On Postgres the migrator first reads the columns of every schema in the database; a column or
  // schema renamed or dropped elsewhere during that read fails it, before any migration has run.
  // Retried for a while, not a number of times: under a schema changed in a tight loop (CI's
  // migrations test, while other files start processes) ten tries within 4.5 s all failed once.
  const giveUpAt = Date.now() + 30_000;
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    const retry = dialect === 'sqlite' || changedElsewhere(error);
    if (!retry || Date.now() >= giveUpAt) throw error instanceof Error ? error : new Error(String(error));
    await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 100 * attempt) * (0.5 + Math.random())));
  }
}

/** Postgres: undefined column, table or schema, as a concurrent change in another schema causes them. */
const changedElsewhere = (error: unknown) => ['42703', '42P01', '3F000'].includes((error as { code?: string } | undefined)?.code ?? '');

/** `gateway migrate` and a cluster's primary: open, migrate, close; a failure names DATABASE_URL. */
export async function migrateDatabase(url: string): Promise<string[]> {
  let opened: OpenDb | undefined;
  try {
    opened = createDb(url);
    return await migrateToLatest(opened.db, opened.dialect, opened.schema);
  } catch (err) {
    throw explainDatabaseError(url, err);
  } finally {
    await opened?.close().catch(() => {});
  }
}
