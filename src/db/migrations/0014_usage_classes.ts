import { sql, type Kysely } from 'kysely';
import { type DialectMigration, withoutChecks } from './kit.ts';

export const migration: DialectMigration = (dialect) => ({
  async up(db: Kysely<any>) {
    // A call's use beyond its hold is charged even below zero (billing/ledger-plan.ts: overruns), so
    // balances and quotas may be negative; every other debit stays conditional in its UPDATE.
    if (dialect === 'sqlite') {
      await withoutChecks(db, 'users', ['balance >= 0']);
      await withoutChecks(db, 'api_keys', ['quota_remain >= 0']);
    } else {
      for (const table of ['users', 'api_keys']) {
        const { rows } = await sql<{ name: string }>`select conname as name from pg_constraint where conrelid = ${table}::regclass and contype = 'c'`.execute(db);
        for (const { name } of rows) await sql`alter table ${sql.table(table)} drop constraint ${sql.ref(name)}`.execute(db);
      }
      // Token counts of any size an upstream reports (SQLite's integers are 64-bit already).
      for (const column of ['input_tokens', 'output_tokens']) await sql`alter table usage alter column ${sql.ref(column)} type bigint`.execute(db);
    }
    // Usage by token class: `input_tokens` stays the uncached prompt, and each class's cost is kept.
    for (const column of ['cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'input_cost', 'cache_read_cost', 'cache_write_cost', 'output_cost']) {
      await db.schema.alterTable('usage').addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    }
  },
});
