import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
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
});
