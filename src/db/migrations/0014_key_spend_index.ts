import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // The console's spend per key sums an account's rows by key: with every column it reads in the
    // index, a big account's sum scans the index alone, not each of its rows in the table.
    await db.schema.createIndex('usage_user_key_spend').on('usage').columns(['user_id', 'key_id', 'input_tokens', 'output_tokens', 'cost']).execute();
    await db.schema.createIndex('tasks_user_key_spend').on('tasks').columns(['user_id', 'key_id', 'cost']).execute();
  },
});
