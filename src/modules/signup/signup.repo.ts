import type { Insertable, Kysely, Transaction } from 'kysely';
import type { ConsoleCredentialsTable, Database, Invite, InvitesTable, SignupTokensTable } from '../../db/types.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** The account's console credentials; false when the email is taken (a parallel sign-up won it). */
export async function insertNewCredentials(trx: Executor, row: Insertable<ConsoleCredentialsTable>): Promise<boolean> {
  const result = await trx.insertInto('console_credentials').values(row).onConflict((oc) => oc.column('email').doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function markVerified(db: Executor, userId: string, now: number): Promise<void> {
  await db.updateTable('console_credentials').set({ email_verified_at: now }).where('user_id', '=', userId).where('email_verified_at', 'is', null).execute();
}

/**
 * Sets the password of an account whose email is not confirmed yet, and with `confirm` confirms it;
 * false when the email was confirmed meanwhile (then nothing changes).
 */
export async function setUnconfirmedPassword(db: Executor, userId: string, passwordHash: string, now: number, confirm = false): Promise<boolean> {
  const result = await db
    .updateTable('console_credentials')
    .set({ password_hash: passwordHash, updated_at: now, ...(confirm ? { email_verified_at: now } : {}) })
    .where('user_id', '=', userId)
    .where('email_verified_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export async function passwordHashOf(db: Executor, userId: string): Promise<string | undefined> {
  return (await db.selectFrom('console_credentials').select('password_hash').where('user_id', '=', userId).executeTakeFirst())?.password_hash;
}

export async function setPasswordHash(db: Executor, userId: string, passwordHash: string, now: number): Promise<void> {
  await db.updateTable('console_credentials').set({ password_hash: passwordHash, updated_at: now }).where('user_id', '=', userId).execute();
}

export async function isVerified(db: Executor, userId: string): Promise<boolean> {
  const row = await db.selectFrom('console_credentials').select('email_verified_at').where('user_id', '=', userId).executeTakeFirst();
  // An account without console credentials was made by the operator: nothing to confirm.
  return !row || row.email_verified_at !== null;
}

export async function insertToken(db: Executor, row: SignupTokensTable): Promise<void> {
  await db.insertInto('signup_tokens').values(row).execute();
}

/** Takes the token once: the account it was issued to, or undefined when it is unknown, used or expired. */
export async function takeToken(db: Executor, tokenHash: string, purpose: SignupTokensTable['purpose'], now: number): Promise<string | undefined> {
  const result = await db
    .updateTable('signup_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (result.numUpdatedRows !== 1n) return undefined;
  const row = await db.selectFrom('signup_tokens').select('user_id').where('token_hash', '=', tokenHash).executeTakeFirst();
  return row?.user_id;
}

/** A finished reset ends the account's other reset links. */
export async function useUpTokens(db: Executor, userId: string, purpose: SignupTokensTable['purpose'], now: number): Promise<void> {
  await db.updateTable('signup_tokens').set({ used_at: now }).where('user_id', '=', userId).where('purpose', '=', purpose).where('used_at', 'is', null).execute();
}

export async function deleteExpiredTokens(db: Executor, now: number): Promise<void> {
  await db.deleteFrom('signup_tokens').where('expires_at', '<=', now).execute();
}

export async function insertInvite(db: Executor, row: Insertable<InvitesTable>): Promise<void> {
  await db.insertInto('invites').values(row).execute();
}

export function getInvite(db: Executor, id: string): Promise<Invite | undefined> {
  return db.selectFrom('invites').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findInviteByHash(db: Executor, codeHash: string): Promise<Invite | undefined> {
  return db.selectFrom('invites').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

export function listInvites(db: Executor, limit: number): Promise<Invite[]> {
  return db.selectFrom('invites').selectAll().orderBy('id', 'desc').limit(limit).execute();
}

/** Takes the invite for a sign-up while it is live and unused: false when another sign-up took it first. */
export async function takeInvite(db: Executor, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('invites')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** The sign-up that took the invite opened no account (its email was taken meanwhile): the invite is free again. */
export async function giveBackInvite(db: Executor, id: string): Promise<void> {
  await db.updateTable('invites').set({ used_at: null }).where('id', '=', id).where('used_by', 'is', null).execute();
}

export async function setInviteUser(db: Executor, id: string, userId: string): Promise<void> {
  await db.updateTable('invites').set({ used_by: userId }).where('id', '=', id).execute();
}

export async function revokeInvite(db: Executor, id: string, now: number): Promise<Invite | undefined> {
  await db.updateTable('invites').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  return getInvite(db, id);
}
