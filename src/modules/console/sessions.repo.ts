import type { Kysely } from 'kysely';
import type { ConsoleSessionsTable, Database } from '../../db/types.ts';

export function findCredentialsByEmail(db: Kysely<Database>, email: string) {
  return db.selectFrom('console_credentials').selectAll().where('email', '=', email).executeTakeFirst();
}

export function findCredentialsByUser(db: Kysely<Database>, userId: string) {
  return db.selectFrom('console_credentials').select(['user_id', 'email']).where('user_id', '=', userId).executeTakeFirst();
}

/**
 * One set of credentials per account: setting them again replaces the email and password. The
 * operator sets them, vouching for the email: it counts as confirmed.
 */
export async function upsertCredentials(db: Kysely<Database>, row: { user_id: string; email: string; password_hash: string; now: number }) {
  await db
    .insertInto('console_credentials')
    .values({ user_id: row.user_id, email: row.email, password_hash: row.password_hash, created_at: row.now, updated_at: row.now, email_verified_at: row.now })
    .onConflict((oc) =>
      oc.column('user_id').doUpdateSet((eb) => ({ email: row.email, password_hash: row.password_hash, updated_at: row.now, email_verified_at: eb.fn.coalesce('console_credentials.email_verified_at', eb.val(row.now)) })),
    )
    .execute();
}

export async function insertSession(db: Kysely<Database>, session: ConsoleSessionsTable) {
  await db.insertInto('console_sessions').values(session).execute();
}

export function findSession(db: Kysely<Database>, tokenHash: string, now: number) {
  return db.selectFrom('console_sessions').selectAll().where('token_hash', '=', tokenHash).where('expires_at', '>', now).executeTakeFirst();
}

export async function deleteSession(db: Kysely<Database>, tokenHash: string) {
  await db.deleteFrom('console_sessions').where('token_hash', '=', tokenHash).execute();
}

/** Signing in again or changing a password ends the account's other sessions. */
export async function deleteUserSessions(db: Kysely<Database>, userId: string) {
  await db.deleteFrom('console_sessions').where('user_id', '=', userId).execute();
}

export async function deleteExpiredSessions(db: Kysely<Database>, now: number) {
  await db.deleteFrom('console_sessions').where('expires_at', '<=', now).execute();
}
