import type { Kysely } from 'kysely';
import type { Database, OidcLoginsTable } from '../../db/types.ts';

export async function insertLogin(db: Kysely<Database>, login: OidcLoginsTable) {
  await db.insertInto('oidc_logins').values(login).execute();
}

/**
 * The sign-in the browser's token names, taken: read and deleted, and returned only if this call
 * deleted it, so a callback replayed (or raced) finds nothing the second time.
 */
export async function takeLogin(db: Kysely<Database>, tokenHash: string, now: number): Promise<OidcLoginsTable | undefined> {
  const login = await db.selectFrom('oidc_logins').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  if (!login) return undefined;
  const deleted = await db.deleteFrom('oidc_logins').where('token_hash', '=', tokenHash).executeTakeFirst();
  if (deleted.numDeletedRows !== 1n || login.expires_at <= now) return undefined;
  return login;
}

export async function deleteExpiredLogins(db: Kysely<Database>, now: number) {
  await db.deleteFrom('oidc_logins').where('expires_at', '<=', now).execute();
}

export function findIdentity(db: Kysely<Database>, issuer: string, subject: string) {
  return db.selectFrom('oidc_identities').select(['user_id']).where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
}

/** Links the identity to the account; an identity linked meanwhile keeps its account (returned). */
export async function linkIdentity(db: Kysely<Database>, row: { issuer: string; subject: string; user_id: string; email: string; now: number }): Promise<string> {
  await db
    .insertInto('oidc_identities')
    .values({ issuer: row.issuer, subject: row.subject, user_id: row.user_id, email: row.email, created_at: row.now })
    .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
    .execute();
  return (await findIdentity(db, row.issuer, row.subject))!.user_id;
}
