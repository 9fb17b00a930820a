import type { Kysely } from 'kysely';
import { type DialectMigration, idColumn } from './kit.ts';

export const migration: DialectMigration = (dialect) => ({
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
});
