import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // A top-up paid with Stripe Checkout (modules/topups/). `amount`, `refunded` and `disputed` are
    // ledger units; `price` is what the session charges, in the currency's smallest unit. The move
    // from pending to paid is one conditional UPDATE in the credit's transaction, so however often
    // Stripe delivers a session's completion it credits once. Balances may go below zero when a paid
    // top-up is refunded or lost in a dispute after it was spent: 0014 lifted users' CHECK.
    await db.schema
      .createTable('topups')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('price', 'bigint', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('session_id', 'text', (c) => c.unique())
      .addColumn('payment_intent', 'text')
      .addColumn('refunded', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('disputed', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('paid_at', 'bigint')
      .execute();
    await db.schema.createIndex('topups_user').on('topups').columns(['user_id', 'id']).execute();
    await db.schema.createIndex('topups_payment_intent').on('topups').column('payment_intent').execute();
  },
});
