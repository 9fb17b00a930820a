import type { AppContext } from '../../context.ts';
import * as accounts from '../accounts/accounts.service.ts';
import { setUserForKeys } from '../accounts/accounts.repo.ts';
import { deleteUserSessions } from '../console/sessions.repo.ts';
import { assertGroup, moveUser } from '../groups/groups.service.ts';

// PATCH /admin/users/:id: the low-balance alert, the customer group and the account's status. All
// are checked before any is written, so a refused field leaves the account as it was.

export interface UserPatch extends accounts.AlertSettings {
  group?: string;
  status?: 'active' | 'disabled';
}

export async function patchUser(ctx: AppContext, userId: string, patch: UserPatch) {
  const { group, status, ...alert } = patch;
  if (group !== undefined || status !== undefined) await accounts.findUser(ctx, userId);
  if (group !== undefined) await assertGroup(ctx, group);
  const alertSent = alert.alert_below !== undefined || alert.alert_url !== undefined;
  if (alertSent || (group === undefined && status === undefined)) await accounts.setAlert(ctx, userId, alert);
  if (group !== undefined) await moveUser(ctx, userId, group);
  if (status !== undefined) await setStatus(ctx, userId, status);
  return accounts.findUser(ctx, userId);
}

/**
 * A disabled account's keys answer nothing (401) in every process within the key cache's reach of a
 * change, its console sessions end and it cannot sign in; what it started (tasks, their callbacks,
 * calls under way) finishes and is billed as usual. Enabling it gives its keys back as they were.
 */
async function setStatus(ctx: AppContext, userId: string, status: 'active' | 'disabled') {
  const hashes = await setUserForKeys(ctx.db, userId, { status });
  if (status === 'disabled') await deleteUserSessions(ctx.db, userId);
  for (const hash of hashes) await ctx.keyCache.announce(hash);
}
