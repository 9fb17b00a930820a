import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // An identity at an OpenID Connect provider, linked to one account: the provider's (issuer,
    // subject) pair is what never changes for a person there, unlike their email.
    await db.schema
      .createTable('oidc_identities')
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('email', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('oidc_identities_pk', ['issuer', 'subject'])
      .execute();
    await db.schema.createIndex('oidc_identities_user').on('oidc_identities').column('user_id').execute();
    // A sign-in on its way through the provider: the browser holds only a random token (its SHA-256
    // is the key here); state, nonce and the PKCE verifier never leave the server. Used once.
    await db.schema
      .createTable('oidc_logins')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('code_verifier', 'text', (c) => c.notNull())
      .addColumn('invite', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('oidc_logins_expiry').on('oidc_logins').column('expires_at').execute();
  },
});
