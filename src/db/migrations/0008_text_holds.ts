import { sql, type Kysely } from 'kysely';
import { type DialectMigration, withoutAutoincrement } from './kit.ts';

export const migration: DialectMigration = (dialect) => ({
  async up(db: Kysely<any>) {
    // The open hold of each synchronous text call, from its hold to its settlement, so a hold whose
    // process died mid-call is found and given back (text-money/sweeper.ts). Rows live for the length
    // of a call; deleting the row is what entitles a settlement to refund, so two can never both.
    await db.schema
      .createTable('text_holds')
      .addColumn('call_id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('key_limited', 'integer', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('endpoint', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .$call((t) => (dialect === 'sqlite' ? t.modifyEnd(sql`without rowid`) : t))
      .execute();
    if (dialect === 'sqlite') {
      // AUTOINCREMENT made every ledger and usage insert read and rewrite sqlite_sequence: one more
      // page in the WAL per commit. Rows are never deleted, so plain rowids still only grow.
      for (const table of ['ledger', 'usage']) await withoutAutoincrement(db, table);
    }
  },
});
