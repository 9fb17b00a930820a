import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // A self-made account signs in only once its email is confirmed (modules/signup/). Credentials
    // made before are the operator's, who vouched for the address: they count as confirmed then.
    await db.schema.alterTable('console_credentials').addColumn('email_verified_at', 'bigint').execute();
    await db.updateTable('console_credentials').set((eb) => ({ email_verified_at: eb.ref('created_at') })).execute();
  },
});
