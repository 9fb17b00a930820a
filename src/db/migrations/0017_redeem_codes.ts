import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // A redemption code (modules/codes/): only its SHA-256 is kept, so the table leaks no code.
    // `used` counts the accounts it has credited; a redemption raises it by one conditional UPDATE
    // (`used < uses`), so parallel redemptions on any number of processes never pass `uses`.
    await db.schema
      .createTable('redeem_codes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('batch_id', 'text', (c) => c.notNull())
      .addColumn('code_hash', 'text', (c) => c.notNull().unique())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('uses', 'integer', (c) => c.notNull())
      .addColumn('used', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('expires_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      .addColumn('note', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('redeem_codes_batch').on('redeem_codes').columns(['batch_id', 'id']).execute();
    // One row per (code, account): the primary key is what lets a code credit an account only once.
    await db.schema
      .createTable('redemptions')
      .addColumn('code_id', 'text', (c) => c.notNull().references('redeem_codes.id'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('redemptions_pk', ['code_id', 'user_id'])
      .execute();
  },
});
