import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

// Every column the spend per key sums (console/usage.repo.ts textSpendByKey).
const SPEND_COLUMNS = ['input_tokens', 'output_tokens', 'cost', 'cache_read_tokens', 'cache_write_tokens', 'input_cost', 'cache_read_cost', 'cache_write_cost', 'output_cost'];

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // The console's spend per key sums an account's rows by key: with every column it reads in the
    // index, a big account's sum scans the index alone, not each of its rows in the table.
    await db.schema.createIndex('usage_user_key_spend').on('usage').columns(['user_id', 'key_id', ...SPEND_COLUMNS]).execute();
    await db.schema.createIndex('tasks_user_key_spend').on('tasks').columns(['user_id', 'key_id', 'cost']).execute();
  },
});
