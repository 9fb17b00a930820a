import fs from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, createTestApp, usingPostgres, type TestApp } from './harness.ts';

// The README's Money section says what guards balances and quotas. Each CHECK constraint it names
// must be in the schema the migrations leave: balances may go below zero since 0014 (a call's
// overrun, a refunded or disputed top-up), so a doc naming a CHECK that is gone misleads operators
// about what the database refuses.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ WORKERS: '0' });
});
afterAll(async () => {
  await t?.close();
});

async function checksOf(table: string): Promise<string> {
  if (usingPostgres) {
    const { rows } = await sql<{ def: string }>`select pg_get_constraintdef(oid) as def from pg_constraint where conrelid = ${table}::regclass and contype = 'c'`.execute(t.ctx.db);
    return rows.map((r) => r.def).join('\n');
  }
  const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = ${table}`.execute(t.ctx.db);
  return rows[0]?.sql ?? '';
}

describe(`the README's Money section [${backendName}]`, () => {
  it('names only CHECK constraints the schema has', async () => {
    const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const money = readme.slice(readme.indexOf('\n## Money\n'), readme.indexOf('\n## ', readme.indexOf('\n## Money\n') + 1));
    expect(money.length).toBeGreaterThan(100);
    const named = [...money.matchAll(/CHECK \((\w+) >= 0\)/g)].map((m) => m[1]!);
    for (const column of named) {
      const table = column === 'balance' ? 'users' : 'api_keys';
      expect(await checksOf(table), `README names CHECK (${column} >= 0) on ${table}`).toMatch(new RegExp(`${column}\\)? >= 0`));
    }
  });
});
