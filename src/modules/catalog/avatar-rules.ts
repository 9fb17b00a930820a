import { badRequest, unknownField } from '../../core/errors.ts';
import type { AvatarRequest } from '../avatars/avatars.schemas.ts';
import { mediaUrl, oneOf } from './rule-kit.ts';

// The avatar submit's rules: group xor group_id; `assets` (1-20) xor the single-asset url + name.

export const MAX_ASSETS = 20;
export const ASSET_TYPES = ['Image', 'Video', 'Audio'] as const;

export interface AvatarSubmission {
  group: { name: string; description: string | null } | null;
  groupId: string | null;
  projectName: string;
  assetType: (typeof ASSET_TYPES)[number];
  assets: { url: string; name: string }[];
}

function entry(raw: unknown, where: string): { url: string; name: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest(`${where} must be an object with url and name`);
  const { url, name, ...rest } = raw as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw unknownField(`${where}.${unknown}`);
  if (typeof url !== 'string' || url === '') throw badRequest(`${where}.url is required`);
  if (typeof name !== 'string' || name === '') throw badRequest(`${where}.name is required`);
  mediaUrl(`${where}.url`, url, { allowAsset: false });
  return { url, name };
}

export function normalizeAvatarRequest(body: AvatarRequest): AvatarSubmission {
  if (body.group && body.group_id) throw badRequest('group and group_id must not be sent together');
  if (!body.group && !body.group_id) throw badRequest('send either group (to create one) or group_id');
  const single = body.url !== undefined || body.name !== undefined;
  if (body.assets !== undefined && single) throw badRequest('assets and the single-asset url + name must not be sent together');
  let assets: { url: string; name: string }[];
  if (body.assets !== undefined) {
    if (body.assets.length === 0) throw badRequest('assets must hold at least one entry');
    if (body.assets.length > MAX_ASSETS) throw badRequest(`assets takes at most ${MAX_ASSETS} entries (got ${body.assets.length})`);
    assets = body.assets.map((raw, i) => entry(raw, `assets[${i}]`));
  } else if (single) {
    assets = [entry({ url: body.url, name: body.name }, 'single asset')];
  } else {
    throw badRequest('send assets, or url and name for a single asset');
  }
  return {
    group: body.group ? { name: body.group.name, description: body.group.description ?? null } : null,
    groupId: body.group_id ?? null,
    projectName: body.project_name ?? 'default',
    assetType: oneOf('asset_type', body.asset_type ?? 'Image', ASSET_TYPES),
    assets,
  };
}
