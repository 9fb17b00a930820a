import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // A mailed link's token (modules/signup/): only its SHA-256 is kept. `purpose` is verify or
    // reset; a token is taken by one conditional UPDATE (`used_at is null and expires_at > now`).
    await db.schema
      .createTable('signup_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema.createIndex('signup_tokens_user').on('signup_tokens').columns(['user_id', 'purpose']).execute();
    await db.schema.createIndex('signup_tokens_expiry').on('signup_tokens').column('expires_at').execute();
    // An operator's invite for SIGNUP=invite: the code's SHA-256, the email it is bound to (lower
    // case; null = anyone), and who used it. Taken by one conditional UPDATE, like a token.
    await db.schema
      .createTable('invites')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('code_hash', 'text', (c) => c.notNull().unique())
      .addColumn('email', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('used_at', 'bigint')
      .addColumn('used_by', 'text', (c) => c.references('users.id'))
      .addColumn('revoked_at', 'bigint')
      .execute();
  },
});
