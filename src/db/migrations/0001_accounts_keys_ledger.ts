import { sql, type Kysely } from 'kysely';
import { type DialectMigration, idColumn } from './kit.ts';

export const migration: DialectMigration = (dialect) => ({
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
});
