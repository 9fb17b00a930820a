import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // Key policies (accounts/key-policy.ts): JSON lists, null = no limit; policy_ceiling is what the
    // operator last set, which an account holder may narrow and never widen.
    for (const column of ['models', 'allowed_ips', 'policy_ceiling']) await db.schema.alterTable('api_keys').addColumn(column, 'text').execute();
    await db.schema.alterTable('api_keys').addColumn('expires_at', 'bigint').execute();
    // Low-balance alerts (webhooks/balance-alerts.ts): alert_sent is 1 from a crossing until a top-up lifts it.
    await db.schema.alterTable('users').addColumn('alert_below', 'bigint').execute();
    await db.schema.alterTable('users').addColumn('alert_url', 'text').execute();
    await db.schema.alterTable('users').addColumn('alert_sent', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema
      .createTable('balance_alerts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('balance', 'bigint', (c) => c.notNull())
      .addColumn('threshold', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
});
