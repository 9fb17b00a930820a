import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // The channel whose upstream keeps a stored response too (an `openai` channel's own
    // /v1/responses, sent the caller's body): a follow-up by previous_response_id goes back to it.
    // Null: only the gateway holds the conversation. No foreign key: a deleted channel leaves the
    // id, and a follow-up then goes to whichever channel routing picks.
    await db.schema.alterTable('responses').addColumn('channel_id', 'text').execute();
  },
});
