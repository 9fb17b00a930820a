import type { Kysely } from 'kysely';
import type { Database, User } from '../../db/types.ts';
import { preparedQuery } from '../../db/prepared.ts';

export async function insertUser(db: Kysely<Database>, user: { id: string; name: string; now: number }): Promise<void> {
  await db
    .insertInto('users')
    .values({ id: user.id, name: user.name, status: 'active', balance: 0, used: 0, created_at: user.now, updated_at: user.now })
    .execute();
}

export function getUser(db: Kysely<Database>, id: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listUsers(db: Kysely<Database>, limit: number, after?: string): Promise<User[]> {
  let query = db.selectFrom('users').selectAll().orderBy('id').limit(limit);
  if (after) query = query.where('id', '>', after);
  return query.execute();
}

export async function countUsers(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

// The account's remaining and used quota are read separately, as SPEC 4.2 distinguishes their failures.
const quotaOf = preparedQuery((db, id: string) => db.selectFrom('users').select('balance').where('id', '=', id));
const usedOf = preparedQuery((db, id: string) => db.selectFrom('users').select('used').where('id', '=', id));

export async function readUserQuota(db: Kysely<Database>, id: string): Promise<number | undefined> {
  return (await quotaOf(db, id))[0]?.balance;
}

export async function readUserUsedQuota(db: Kysely<Database>, id: string): Promise<number | undefined> {
  return (await usedOf(db, id))[0]?.used;
}
