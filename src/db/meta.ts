import type { Kysely } from 'kysely';
import type { Database } from './types.ts';

// The `meta` table: one value per name, for the gateway's own state that every process sharing the
// database must agree on (the simulator channel, the catalogue's models at the last start, the
// operator's price table, the file-URL secret, the demo account's claim).

export async function getMeta(db: Kysely<Database>, name: string): Promise<string | undefined> {
  return (await db.selectFrom('meta').select('value').where('name', '=', name).executeTakeFirst())?.value;
}

export async function setMeta(db: Kysely<Database>, name: string, value: string): Promise<void> {
  await db.insertInto('meta').values({ name, value }).onConflict((oc) => oc.column('name').doUpdateSet({ value })).execute();
}

/** Writes `value` unless `name` is taken: whether this call wrote it (of processes starting at once, one does). */
export async function claimMeta(db: Kysely<Database>, name: string, value: string): Promise<boolean> {
  const claimed = await db.insertInto('meta').values({ name, value }).onConflict((oc) => oc.column('name').doNothing()).executeTakeFirst();
  return Number(claimed.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function deleteMeta(db: Kysely<Database>, name: string): Promise<void> {
  await db.deleteFrom('meta').where('name', '=', name).execute();
}
