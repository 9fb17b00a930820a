import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';

/** Makes the task's waiting poll job due now; a job another worker is running is left alone. */
export async function pollNow(db: Kysely<Database>, taskId: string): Promise<boolean> {
  const now = Date.now();
  const result = await db
    .updateTable('jobs')
    .set({ run_at: now })
    .where('task_id', '=', taskId)
    .where('kind', '=', 'poll')
    .where('run_at', '>', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
