import type { Kysely } from 'kysely';
import type { Channel } from '../../core/channel.ts';
import type { ChannelsTable, Database } from '../../db/types.ts';
import type { Insertable, Selectable, Updateable } from 'kysely';

/** A row as the rest of the code sees it: its JSON columns parsed here and nowhere else. */
export function channelFromRow(row: Selectable<ChannelsTable>): Channel {
  return {
    ...row,
    models: new Set(JSON.parse(row.models) as string[]),
    model_mapping: new Map(Object.entries(JSON.parse(row.model_mapping) as Record<string, string>)),
    options: Object.freeze(readOptions(row.options)),
  };
}

/** Options are written checked by the type's schema; one that cannot be read anyway reads as none (no keys). */
function readOptions(column: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(column || '{}');
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export async function insertChannel(db: Kysely<Database>, channel: Insertable<ChannelsTable>): Promise<void> {
  await db.insertInto('channels').values(channel).execute();
}

export async function getChannel(db: Kysely<Database>, id: string): Promise<Channel | undefined> {
  const row = await db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst();
  return row && channelFromRow(row);
}

export async function listChannels(db: Kysely<Database>): Promise<Channel[]> {
  const rows = await db.selectFrom('channels').selectAll().orderBy('priority', 'desc').orderBy('id').execute();
  return rows.map(channelFromRow);
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
