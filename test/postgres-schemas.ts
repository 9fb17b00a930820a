import { randomBytes } from 'node:crypto';
import pg from 'pg';

// vitest globalSetup. On Postgres every test file gets a schema of its own (test/harness.ts). They
// are all dropped here, once every file has finished, not by each file as it ends: Kysely's
// migrator looks at the tables of every schema in the database (has_schema_privilege on each), and
// a schema dropped by another file during that look fails the migration with "schema ... does not
// exist" (seen in CI). Only this run's schemas are dropped, so parallel runs on one database are safe.

export default function setup(): (() => Promise<void>) | undefined {
  const url = process.env.DATABASE_URL;
  if (!url || !/^postgres(ql)?:\/\//.test(url)) return undefined;
  const run = randomBytes(4).toString('hex');
  process.env.TEST_SCHEMA_RUN = run; // inherited by the test workers
  return async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>(`select nspname as name from pg_namespace where nspname like $1`, [`t\\_${run}\\_%`]);
      for (const { name } of rows) await client.query(`drop schema if exists ${name} cascade`);
    } finally {
      await client.end();
    }
  };
}
