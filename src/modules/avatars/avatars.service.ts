import { noteSubmit, type CallEntry } from '../calls/call-entry.ts';
import type { AppContext } from '../../context.ts';
import type { Asset, TaskResultAsset } from './avatars.types.ts';
import { badRequest, serviceUnavailable } from '../../core/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { CachedKey } from '../../core/key.ts';
import { normalizeAvatarRequest } from '../catalog/avatar-rules.ts';
import { AVATAR_REVIEW_MODEL } from '../../core/catalog/models.ts';
import { writeSubmits } from '../tasks/submit-batcher.ts';
import { asPaymentError, newTask } from '../tasks/tasks.service.ts';
import { acceptWebhook, recordRefusal } from '../webhooks/accept.ts';
import type { AvatarReceipt, AvatarRequest } from './avatars.schemas.ts';
import { getAssets, getGroup, insertAssets, insertGroup } from './avatars.repo.ts';

export const assetUrl = (id: string) => `asset://${id}`;

/**
 * An avatar submit: a group (made now, or the caller's existing one), the assets as Pending, and the
 * review task with its hold, all in one transaction; the review itself runs as a task.
 */
export async function submitAvatar(ctx: AppContext, key: CachedKey, body: AvatarRequest, log?: CallEntry): Promise<AvatarReceipt> {
  const submission = normalizeAvatarRequest(body);
  if (submission.groupId) {
    const group = await getGroup(ctx.db, submission.groupId);
    if (!group || group.user_id !== key.user_id) throw badRequest(`group_id: no group ${submission.groupId} in this account`);
  }
  if (!(await ctx.channels.pick(AVATAR_REVIEW_MODEL))) throw serviceUnavailable('No upstream reviews avatar assets right now');
  const now = Date.now();
  const groupId = submission.groupId ?? newId('grp');
  const assets = submission.assets.map((a) => ({ asset_id: newId('as'), name: a.name, url: a.url }));
  const webhook = await acceptWebhook(ctx, body.webhook);
  const task = newTask({
    key,
    kind: 'avatar',
    model: AVATAR_REVIEW_MODEL,
    params: { model: AVATAR_REVIEW_MODEL, group_id: groupId, project_name: submission.projectName, asset_type: submission.assetType, assets },
    holdUnits: ctx.groups.pricingFor(key.group, AVATAR_REVIEW_MODEL).perAssetUnits(AVATAR_REVIEW_MODEL) * assets.length,
    webhook: webhook.target,
    deadlineMs: ctx.config.deadlineMs.avatar,
    initialStatus: 'processing',
  });
  try {
    await ctx.db.transaction().execute(async (trx) => {
      if (submission.group) {
        const { name, description } = submission.group;
        await insertGroup(trx, { id: groupId, user_id: key.user_id, name, description, kind: 'AIGC', project_name: submission.projectName, created_at: now });
      }
      await insertAssets(
        trx,
        assets.map((a) => ({ id: a.asset_id, user_id: key.user_id, group_id: groupId, task_id: task.id, name: a.name, url: a.url, asset_type: submission.assetType, status: 'Pending' as const, created_at: now, updated_at: now })),
      );
      const [failure] = await writeSubmits(trx, [task]);
      if (failure) throw failure;
    });
  } catch (err) {
    throw asPaymentError(err);
  }
  ctx.quotas.changed([key.id]);
  if (log) noteSubmit(log, task.id, task.hold_amount);
  recordRefusal(ctx, task.id, webhook);
  ctx.wakeWorkers();
  return { code: 200, data: { id: task.id, object: 'vidgen.avatar.asset.task', status: 'processing', progress: 10, model: AVATAR_REVIEW_MODEL, group_id: groupId } };
}

/** Asset URLs in a video submit must name Active assets of the caller's own account. */
export async function checkUsableAssets(ctx: Pick<AppContext, 'db'>, userId: string, ids: string[]): Promise<Asset[]> {
  const found = new Map((await getAssets(ctx.db, ids)).map((a) => [a.id, a]));
  for (const id of ids) {
    const asset = found.get(id);
    if (!asset || asset.user_id !== userId) throw badRequest(`${assetUrl(id)} is not an asset of this account`);
    if (asset.status !== 'Active') throw badRequest(`${assetUrl(id)} is not usable: its status is ${asset.status}`);
  }
  return [...found.values()];
}

export function resultEntry(asset: { asset_id: string }, status: 'Active' | 'Failed'): TaskResultAsset {
  return { asset_id: asset.asset_id, asset_url: assetUrl(asset.asset_id), status };
}
