import type { Transaction } from 'kysely';
import type { Database, Task } from '../../db/types.ts';
import type { Ending } from '../tasks/tasks.service.ts';
import { setAssetStatus } from './avatars.repo.ts';
import { kindParams } from '../tasks/tasks.repo.ts';

/**
 * Writes a review's outcome onto the assets, in the transaction that ends the task. An asset the
 * review did not pass (or a review that never finished: timeout, upstream error) is Failed.
 */
export async function applyReview(trx: Transaction<Database>, task: Task, ending: Ending): Promise<void> {
  const call = kindParams(task);
  const all = call.kind === 'avatar' ? call.params.assets.map((a) => a.asset_id) : [];
  const reviewed = (ending.result?.assets ?? []) as { asset_id: string; status: string }[];
  const active = new Set(reviewed.filter((a) => a.status === 'Active').map((a) => a.asset_id));
  await setAssetStatus(trx, all.filter((id) => active.has(id)), 'Active');
  await setAssetStatus(trx, all.filter((id) => !active.has(id)), 'Failed');
}
