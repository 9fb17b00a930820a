import type { Kysely } from 'kysely';
import { type DialectMigration, idColumn } from './kit.ts';

export const migration: DialectMigration = (dialect) => ({
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
});
