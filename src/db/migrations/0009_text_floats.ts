import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // A process's float (text-money/floats.ts) is a text_holds row that many calls take from:
    // `spent` is what its settled calls cost, so closing it (or the sweeper) gives back the rest.
    // The balance routes subtract what open holds have not spent, so they look up by account and key.
    await db.schema.alterTable('text_holds').addColumn('spent', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.createIndex('text_holds_user').on('text_holds').column('user_id').execute();
    await db.schema.createIndex('text_holds_key').on('text_holds').column('key_id').execute();
  },
});
