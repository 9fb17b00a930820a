import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOLD_TABLE, USAGE_TABLE } from '../src/modules/text-money/tables.ts';
import { backendName, createTestApp, usingPostgres, type TestApp } from './harness.ts';

// Text money's INSERTs and UNNESTs take their column lists from one description per table
// (text-money/tables.ts). Each description must name the migrated table's columns, in its order
// and with its types, leaving out only the column a new row never sets.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
});
afterAll(() => t.close());

/** The table's columns in order, as [name, type]: the declared type on SQLite, information_schema's on Postgres. */
async function columnsOf(table: string): Promise<[string, string][]> {
  const rows = usingPostgres
    ? await sql<{ name: string; type: string }>`
        select column_name as name, data_type as type from information_schema.columns
        where table_name = ${table} and table_schema = current_schema() order by ordinal_position`.execute(t.ctx.db)
    : await sql<{ name: string; type: string }>`select name, lower(type) as type from pragma_table_info(${table}) order by cid`.execute(t.ctx.db);
  return rows.rows.map((r) => [r.name, r.type]);
}

const asDeclared = { text: 'text', int: 'integer', bigint: 'bigint' } as const;
// SQLite stores integer and bigint alike (64-bit INTEGER affinity): a column widened to bigint on
// Postgres keeps its older declaration there.
const sameOnThisBackend = (type: string) => (usingPostgres ? type : type === 'bigint' ? 'integer' : type);

describe(`text money's table descriptions [${backendName}]`, () => {
  for (const [table, described, leftOut] of [
    ['usage', USAGE_TABLE, 'id'],
    ['text_holds', HOLD_TABLE, 'spent'],
  ] as const) {
    it(`${table}: every column but ${leftOut}, in order, with its type`, async () => {
      const migrated = (await columnsOf(table)).filter(([name]) => name !== leftOut).map(([name, type]) => [name, sameOnThisBackend(type)]);
      expect(described.map(([name, type]) => [name, sameOnThisBackend(asDeclared[type])])).toEqual(migrated);
    });
  }
});
