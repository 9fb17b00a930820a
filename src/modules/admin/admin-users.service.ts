import type { AppContext } from '../../context.ts';
import * as accounts from '../accounts/accounts.service.ts';
import { assertGroup, moveUser } from '../groups/groups.service.ts';

// PATCH /admin/users/:id: the low-balance alert and the customer group. Both are checked before
// either is written, so a refused field leaves the account as it was.

export interface UserPatch extends accounts.AlertSettings {
  group?: string;
}

export async function patchUser(ctx: AppContext, userId: string, patch: UserPatch) {
  const { group, ...alert } = patch;
  if (group !== undefined) {
    await accounts.findUser(ctx, userId);
    await assertGroup(ctx, group);
  }
  const alertSent = alert.alert_below !== undefined || alert.alert_url !== undefined;
  if (alertSent || group === undefined) await accounts.setAlert(ctx, userId, alert);
  if (group !== undefined) await moveUser(ctx, userId, group);
  return accounts.findUser(ctx, userId);
}
