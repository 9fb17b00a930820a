import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Asset, AssetGroupsTable, AssetStatus, AssetsTable, Database } from '../../db/types.ts';
import type { ReviewedAssets } from '../../core/reviewed-assets.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export async function insertGroup(db: Executor, group: Insertable<AssetGroupsTable>): Promise<void> {
  await db.insertInto('asset_groups').values(group).execute();
}

export function getGroup(db: Executor, id: string) {
  return db.selectFrom('asset_groups').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertAssets(db: Executor, assets: Insertable<AssetsTable>[]): Promise<void> {
  await db.insertInto('assets').values(assets).execute();
}

export async function setAssetStatus(db: Executor, ids: string[], status: AssetStatus): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('assets').set({ status, updated_at: Date.now() }).where('id', 'in', ids).execute();
}

export function getAssets(db: Executor, ids: string[]): Promise<Asset[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('assets').selectAll().where('id', 'in', ids).execute();
}

export function listAssets(db: Executor, userId: string, groupId?: string): Promise<Asset[]> {
  let query = db.selectFrom('assets').selectAll().where('user_id', '=', userId).orderBy('id').limit(1000);
  if (groupId) query = query.where('group_id', '=', groupId);
  return query.execute();
}

export function listGroups(db: Executor, userId: string) {
  return db.selectFrom('asset_groups').selectAll().where('user_id', '=', userId).orderBy('id').limit(1000).execute();
}

/** Earlier reviews as providers read them (core/reviewed-assets.ts): the reviewing tasks' upstream ids. */
export function reviewedAssets(db: Kysely<Database>): ReviewedAssets {
  return {
    async group(ourGroupId) {
      const row = await db.selectFrom('asset_groups').select(['name', 'description']).where('id', '=', ourGroupId).executeTakeFirst();
      if (!row) return undefined;
      const reviews = await db
        .selectFrom('assets')
        .innerJoin('tasks', 'tasks.id', 'assets.task_id')
        .select('tasks.upstream_id as upstream')
        .where('assets.group_id', '=', ourGroupId)
        .where('tasks.upstream_id', 'is not', null)
        .limit(50)
        .execute();
      return { name: row.name, description: row.description, reviewUpstreams: reviews.map((r) => r.upstream) };
    },
    async reviewUpstreams(ourAssetIds) {
      if (ourAssetIds.length === 0) return [];
      return db
        .selectFrom('assets')
        .innerJoin('tasks', 'tasks.id', 'assets.task_id')
        .select(['assets.id as id', 'tasks.upstream_id as upstream'])
        .where('assets.id', 'in', ourAssetIds)
        .execute();
    },
  };
}
