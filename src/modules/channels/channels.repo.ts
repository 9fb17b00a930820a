import type { Kysely } from 'kysely';
import type { Channel, ChannelsTable, Database } from '../../db/types.ts';
import type { Insertable, Updateable } from 'kysely';

export async function insertChannel(db: Kysely<Database>, channel: Insertable<ChannelsTable>): Promise<void> {
  await db.insertInto('channels').values(channel).execute();
}

export function getChannel(db: Kysely<Database>, id: string): Promise<Channel | undefined> {
  return db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listChannels(db: Kysely<Database>): Promise<Channel[]> {
  return db.selectFrom('channels').selectAll().orderBy('priority', 'desc').orderBy('id').execute();
}

export async function updateChannel(db: Kysely<Database>, id: string, changes: Updateable<ChannelsTable>): Promise<boolean> {
  const result = await db
    .updateTable('channels')
    .set({ ...changes, updated_at: Date.now() })
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteChannel(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('channels').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
