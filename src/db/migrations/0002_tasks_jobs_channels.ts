import type { Kysely } from 'kysely';
import { type DialectMigration, idColumn } from './kit.ts';

export const migration: DialectMigration = (dialect) => ({
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
});
