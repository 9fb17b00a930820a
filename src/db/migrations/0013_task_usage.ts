import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // The tokens an upstream counted for a task (a per-token image model such as imglite-3.1), kept
    // with the task for the console and the usage export; null where the upstream counts none.
    await db.schema.alterTable('tasks').addColumn('input_tokens', 'integer').execute();
    await db.schema.alterTable('tasks').addColumn('output_tokens', 'integer').execute();
  },
});
