import { Kysely, Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import { createDb, type OpenDb, type Dialect } from './index.ts';
import { explainDatabaseError } from './outage.ts';

// Each migration takes the dialect, so the few differences (auto-increment ids) stay in one place.
type DialectMigration = (dialect: Dialect) => Migration;

const idColumn = (dialect: Dialect) => (dialect === 'postgres' ? 'bigserial' : 'integer');

const migrations: Record<string, DialectMigration> = {
  '0001_accounts_keys_ledger': (dialect) => ({
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
        .addColumn('balance', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`balance >= 0`))
        .addColumn('used', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('key_prefix', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
        .addColumn('unlimited', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('quota_remain', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`quota_remain >= 0`))
        .addColumn('quota_used', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('rate_limit_rpm', 'integer')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint')
        .execute();
      await db.schema.createIndex('api_keys_user').on('api_keys').column('user_id').execute();
      await db.schema.createIndex('api_keys_updated').on('api_keys').column('updated_at').execute();
      await db.schema
        .createTable('ledger')
        .addColumn('id', idColumn(dialect), (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('key_id', 'text')
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('balance_delta', 'bigint', (c) => c.notNull())
        .addColumn('used_delta', 'bigint', (c) => c.notNull())
        .addColumn('key_remain_delta', 'bigint', (c) => c.notNull())
        .addColumn('key_used_delta', 'bigint', (c) => c.notNull())
        .addColumn('ref', 'text')
        .addColumn('note', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ledger_user').on('ledger').columns(['user_id', 'id']).execute();
      await db.schema.createIndex('ledger_ref').on('ledger').column('ref').execute();
      await db.schema
        .createTable('meta')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  }),
  '0002_tasks_jobs_channels': (dialect) => ({
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('tasks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('params', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('progress', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('channel_id', 'text')
        .addColumn('upstream_id', 'text')
        .addColumn('hold_amount', 'bigint', (c) => c.notNull())
        .addColumn('key_limited', 'integer', (c) => c.notNull())
        .addColumn('cost', 'bigint')
        .addColumn('webhook', 'text')
        .addColumn('result', 'text')
        .addColumn('error_code', 'text')
        .addColumn('error_message', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('started_at', 'bigint')
        .addColumn('eta_at', 'bigint')
        .addColumn('deadline_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tasks_user').on('tasks').columns(['user_id', 'id']).execute();
      await db.schema.createIndex('tasks_open_deadline').on('tasks').columns(['status', 'deadline_at']).execute();
      await db.schema
        .createTable('jobs')
        .addColumn('id', idColumn(dialect), (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('task_id', 'text', (c) => c.notNull())
        .addColumn('run_at', 'bigint', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', 'bigint')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('jobs_due').on('jobs').columns(['run_at', 'lease_until']).execute();
      await db.schema.createIndex('jobs_task').on('jobs').column('task_id').execute();
      await db.schema
        .createTable('channels')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('base_url', 'text')
        .addColumn('secret', 'text')
        .addColumn('models', 'text', (c) => c.notNull())
        .addColumn('model_mapping', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('weight', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('status', 'text', (c) => c.notNull().defaultTo('enabled'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  }),
  '0003_webhooks': (dialect) => ({
    async up(db: Kysely<any>) {
      await db.schema.alterTable('users').addColumn('webhook_secret', 'text').execute();
      await db.schema.alterTable('tasks').addColumn('webhook_round', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', idColumn(dialect), (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('task_id', 'text', (c) => c.notNull())
        .addColumn('round', 'integer', (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('error', 'text')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_attempts_task').on('webhook_attempts').columns(['task_id', 'round']).execute();
    },
  }),
  '0004_avatar_assets': () => ({
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('asset_groups')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('project_name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('asset_groups_user').on('asset_groups').column('user_id').execute();
      await db.schema
        .createTable('assets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('group_id', 'text', (c) => c.notNull().references('asset_groups.id'))
        .addColumn('task_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('asset_type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('assets_user').on('assets').columns(['user_id', 'id']).execute();
      await db.schema.createIndex('assets_task').on('assets').column('task_id').execute();
    },
  }),
  '0005_usage': (dialect) => ({
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('usage')
        .addColumn('id', idColumn(dialect), (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('endpoint', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('input_tokens', 'integer', (c) => c.notNull())
        .addColumn('output_tokens', 'integer', (c) => c.notNull())
        .addColumn('cost', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('usage_user').on('usage').columns(['user_id', 'id']).execute();
    },
  }),
  '0006_console': () => ({
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('console_credentials')
        .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id'))
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('console_sessions')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('console_sessions_expiry').on('console_sessions').column('expires_at').execute();
    },
  }),
  '0007_gateway_assert': (dialect) => ({
    async up(db: Kysely<any>) {
      // Lets one statement abort itself (and so roll back all it did) when a check on its own
      // results fails; used by the whole-batch ledger statements (billing/ledger-statement.ts).
      if (dialect !== 'postgres') return;
      await sql`create function gateway_assert(ok boolean, message text) returns boolean volatile language plpgsql as $$
        begin
          if not ok then raise exception using message = message, errcode = 'P0001'; end if;
          return true;
        end $$`.execute(db);
    },
  }),
  '0008_text_holds': (dialect) => ({
    async up(db: Kysely<any>) {
      // The open hold of each synchronous text call, from its hold to its settlement, so a hold whose
      // process died mid-call is found and given back (text/text-holds.ts). Rows live for the length
      // of a call; deleting the row is what entitles a settlement to refund, so two can never both.
      await db.schema
        .createTable('text_holds')
        .addColumn('call_id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('key_limited', 'integer', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('endpoint', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .$call((t) => (dialect === 'sqlite' ? t.modifyEnd(sql`without rowid`) : t))
        .execute();
      if (dialect === 'sqlite') {
        // AUTOINCREMENT made every ledger and usage insert read and rewrite sqlite_sequence: one more
        // page in the WAL per commit. Rows are never deleted, so plain rowids still only grow.
        for (const table of ['ledger', 'usage']) await withoutAutoincrement(db, table);
      }
    },
  }),
  '0009_text_floats': () => ({
    async up(db: Kysely<any>) {
      // A process's float (text/text-floats.ts) is a text_holds row that many calls take from:
      // `spent` is what its settled calls cost, so closing it (or the sweeper) gives back the rest.
      // The balance routes subtract what open holds have not spent, so they look up by account and key.
      await db.schema.alterTable('text_holds').addColumn('spent', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.createIndex('text_holds_user').on('text_holds').column('user_id').execute();
      await db.schema.createIndex('text_holds_key').on('text_holds').column('key_id').execute();
    },
  }),
  '0010_key_policies_balance_alerts': () => ({
    async up(db: Kysely<any>) {
      // Key policies (accounts/key-policy.ts): JSON lists, null = no limit; policy_ceiling is what the
      // operator last set, which an account holder may narrow and never widen.
      for (const column of ['models', 'allowed_ips', 'policy_ceiling']) await db.schema.alterTable('api_keys').addColumn(column, 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('expires_at', 'bigint').execute();
      // Low-balance alerts (webhooks/balance-alerts.ts): alert_sent is 1 from a crossing until a top-up lifts it.
      await db.schema.alterTable('users').addColumn('alert_below', 'bigint').execute();
      await db.schema.alterTable('users').addColumn('alert_url', 'text').execute();
      await db.schema.alterTable('users').addColumn('alert_sent', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema
        .createTable('balance_alerts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('balance', 'bigint', (c) => c.notNull())
        .addColumn('threshold', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  }),
  '0011_channel_options': () => ({
    async up(db: Kysely<any>) {
      // A channel type's own settings (providers/registry.ts), secrets among them: a JSON object.
      await db.schema.alterTable('channels').addColumn('options', 'text', (c) => c.notNull().defaultTo('{}')).execute();
    },
  }),
  '0012_channel_health': () => ({
    async up(db: Kysely<any>) {
      // What the task engine saw of a channel (tasks/channel-health.ts), for the console and `channels list`:
      // submits refused before acceptance in a row, the last such error, and a 401/403 (its secret or account).
      await db.schema.alterTable('channels').addColumn('health_failures', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('channels').addColumn('health_error', 'text').execute();
      await db.schema.alterTable('channels').addColumn('health_error_at', 'bigint').execute();
      await db.schema.alterTable('channels').addColumn('needs_attention', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  }),
};

/** SQLite: rebuilds `table` as it is, minus AUTOINCREMENT (its rows, ids and indexes kept). */
async function withoutAutoincrement(db: Kysely<any>, table: string): Promise<void> {
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

export async function migrateToLatest(db: Kysely<any>, dialect: Dialect, schema?: string): Promise<string[]> {
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
