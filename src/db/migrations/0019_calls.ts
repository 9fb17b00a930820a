import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // The call log (modules/calls/): one row per text call and per task submit, refused ones too,
    // written in batches off the request path and deleted after CALL_LOG_DAYS. `id` is the request
    // id; usage and cost are per token class in ledger units; `error` is JSON {code, message}.
    await db.schema
      .createTable('calls')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('time', 'bigint', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('model', 'text')
      .addColumn('surface', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'text')
      .addColumn('channel_name', 'text')
      .addColumn('channel_type', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('http_status', 'integer', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('first_token_ms', 'integer')
      .addColumn('usage', 'text')
      .addColumn('cost', 'text')
      .addColumn('task_id', 'text')
      .execute();
    await db.schema.createIndex('calls_user_time').on('calls').columns(['user_id', 'time']).execute();
    await db.schema.createIndex('calls_time').on('calls').columns(['time']).execute();
  },
});
