import { sql, type Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = (dialect) => ({
  async up(db: Kysely<any>) {
    // Lets one statement abort itself (and so roll back all it did) when a check on its own
    // results fails; used by the whole-batch ledger statements (billing/ledger-statement.ts).
    if (dialect !== 'postgres') return;
    await sql`create function gateway_assert(ok boolean, message text) returns boolean volatile language plpgsql as $$
      begin
        if not ok then raise exception using message = message, errcode = 'P0001'; end if;
        return true;
      end $$`.execute(db);
  },
});
