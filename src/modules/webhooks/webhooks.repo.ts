import type { Insertable, Kysely } from 'kysely';
import type { Database, WebhookAttemptsTable } from '../../db/types.ts';
import { newSigningSecret } from './signing.ts';

export async function recordAttempt(db: Kysely<Database>, attempt: Insertable<WebhookAttemptsTable>): Promise<void> {
  await db.insertInto('webhook_attempts').values(attempt).execute();
}

export async function attemptsInRound(db: Kysely<Database>, taskId: string, round: number): Promise<number> {
  const row = await db
    .selectFrom('webhook_attempts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('task_id', '=', taskId)
    .where('round', '=', round)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function listAttempts(db: Kysely<Database>, taskId: string) {
  return db.selectFrom('webhook_attempts').selectAll().where('task_id', '=', taskId).orderBy('id').execute();
}

/** The account's signing secret, made (once, whoever asks first) when it has none. */
export async function signingSecret(db: Kysely<Database>, userId: string): Promise<string | undefined> {
  await db.updateTable('users').set({ webhook_secret: newSigningSecret() }).where('id', '=', userId).where('webhook_secret', 'is', null).execute();
  const row = await db.selectFrom('users').select('webhook_secret').where('id', '=', userId).executeTakeFirst();
  return row?.webhook_secret ?? undefined;
}

export async function rotateSigningSecret(db: Kysely<Database>, userId: string): Promise<string | undefined> {
  const secret = newSigningSecret();
  const result = await db.updateTable('users').set({ webhook_secret: secret }).where('id', '=', userId).executeTakeFirst();
  return result.numUpdatedRows > 0n ? secret : undefined;
}
