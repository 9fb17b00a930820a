import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createDb } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrations.ts';
import { backendName, freshDatabase, usingPostgres } from './harness.ts';

// Kysely's migrator reads the columns of every schema in the database before it migrates one. A
// column renamed in another schema during that read failed it ("column ... of relation ... does not
// exist"): seen in CI, when test/balance.test.ts renamed a column while another file migrated.

describe.skipIf(!usingPostgres)(`migrations beside changes in other schemas [${backendName}]`, () => {
  it('a column renamed back and forth in another schema does not fail a migration', async () => {
    const elsewhere = await freshDatabase();
    const admin = new pg.Client({ connectionString: elsewhere.url });
    await admin.connect();
    await admin.query(`create table ${elsewhere.schema}.churn (id text, balance bigint)`);
    let churning = true;
    let renames = 0;
    const churn = (async () => {
      for (let flip = false; churning; flip = !flip, renames++) {
        await admin.query(`alter table ${elsewhere.schema}.churn rename column ${flip ? 'balance_gone to balance' : 'balance to balance_gone'}`);
      }
    })();
    try {
      for (let i = 0; i < 5; i++) {
        const target = await freshDatabase();
        const { db, close } = createDb(target.url, { schema: target.schema });
        try {
          expect((await migrateToLatest(db, 'postgres', target.schema)).length).toBeGreaterThan(0);
        } finally {
          await close();
        }
      }
    } finally {
      churning = false;
      await churn;
      await admin.end();
    }
    expect(renames).toBeGreaterThan(10);
  }, 60_000);
});
