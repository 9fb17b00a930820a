import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // A customer group (modules/groups/): what its accounts pay, as a multiplier of the price table
    // and per-model overrides (JSON, the price table's shape), and the models they may call (JSON
    // array; null = all). `default` always exists and is the price table as it is.
    await db.schema
      .createTable('groups')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('multiplier', 'double precision', (c) => c.notNull())
      .addColumn('models', 'text')
      .addColumn('prices', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    const now = Date.now();
    await db.insertInto('groups').values({ name: 'default', multiplier: 1, models: null, prices: null, created_at: now, updated_at: now }).execute();
    await db.schema.alterTable('users').addColumn('group_name', 'text', (c) => c.notNull().defaultTo('default')).execute();
  },
});
