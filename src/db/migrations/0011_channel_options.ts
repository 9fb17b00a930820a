import type { Kysely } from 'kysely';
import type { DialectMigration } from './kit.ts';

export const migration: DialectMigration = () => ({
  async up(db: Kysely<any>) {
    // A channel type's own settings (providers/registry.ts), secrets among them: a JSON object.
    await db.schema.alterTable('channels').addColumn('options', 'text', (c) => c.notNull().defaultTo('{}')).execute();
  },
});
