import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';

/**
 * Makes the task's waiting poll job due now: 'moved'. A job a worker is running is left alone:
 * 'running'. No waiting poll (already due, or none): 'none'.
 */
export async function pollNow(db: Kysely<Database>, taskId: string): Promise<'moved' | 'running' | 'none'> {
  const now = Date.now();
  const result = await db
    .updateTable('jobs')
    .set({ run_at: now })
    .where('task_id', '=', taskId)
    .where('kind', '=', 'poll')
    .where('run_at', '>', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  if (result.numUpdatedRows > 0n) return 'moved';
  const running = await db
    .selectFrom('jobs')
    .select('id')
    .where('task_id', '=', taskId)
    .where('kind', '=', 'poll')
    .where('lease_until', '>=', now)
    .executeTakeFirst();
  return running ? 'running' : 'none';
}
