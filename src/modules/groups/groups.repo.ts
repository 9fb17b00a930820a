import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';
import type { ModelPrice } from '../billing/price-schema.ts';
import type { Group } from './group-prices.ts';

// The groups table, and the only place its JSON columns are parsed.

export interface GroupRow {
  name: string;
  multiplier: number;
  models: string[];
  prices: Record<string, ModelPrice>;
  updated_at: number;
}

export async function listGroups(db: Kysely<Database>): Promise<GroupRow[]> {
  const rows = await db.selectFrom('groups').selectAll().orderBy('name').execute();
  return rows.map((r) => ({
    name: r.name,
    multiplier: Number(r.multiplier),
    models: r.models ? (JSON.parse(r.models) as string[]) : [],
    prices: r.prices ? (JSON.parse(r.prices) as Record<string, ModelPrice>) : {},
    updated_at: Number(r.updated_at),
  }));
}

export const asGroup = (row: GroupRow): Group => ({
  name: row.name,
  multiplier: row.multiplier,
  models: row.models.length > 0 ? new Set(row.models) : undefined,
  prices: row.prices,
});

/** Creates the group, or replaces every setting of the one with this name. */
export async function putGroup(db: Kysely<Database>, row: Omit<GroupRow, 'updated_at'>): Promise<void> {
  const now = Date.now();
  const values = { multiplier: row.multiplier, models: row.models.length > 0 ? JSON.stringify(row.models) : null, prices: Object.keys(row.prices).length > 0 ? JSON.stringify(row.prices) : null, updated_at: now };
  await db
    .insertInto('groups')
    .values({ name: row.name, ...values, created_at: now })
    .onConflict((oc) => oc.column('name').doUpdateSet(values))
    .execute();
}

export async function groupExists(db: Kysely<Database>, name: string): Promise<boolean> {
  return Boolean(await db.selectFrom('groups').select('name').where('name', '=', name).executeTakeFirst());
}

export async function groupOfUser(db: Kysely<Database>, userId: string): Promise<string | undefined> {
  return (await db.selectFrom('users').select('group_name').where('id', '=', userId).executeTakeFirst())?.group_name;
}
