import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // Opt-in body capture (modules/calls/call-bodies.ts): a key's `log_bodies` (0/1) has the
    // request and answer of its calls stored in the result store; the call's `bodies` is the key of
    // that object (null: none), deleted with the row.
    await db.schema.alterTable('api_keys').addColumn('log_bodies', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('calls').addColumn('bodies', 'text').execute();
  },
});
