import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
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
});
