import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // What the task engine saw of a channel (tasks/channel-health.ts), for the console and `channels list`:
    // submits refused before acceptance in a row, the last such error, and a 401/403 (its secret or account).
    await db.schema.alterTable('channels').addColumn('health_failures', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('channels').addColumn('health_error', 'text').execute();
    await db.schema.alterTable('channels').addColumn('health_error_at', 'bigint').execute();
    await db.schema.alterTable('channels').addColumn('needs_attention', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  },
});
