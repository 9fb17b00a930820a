import type { AppContext } from '../../context.ts';
import type { CachedKey } from '../../core/key.ts';
import { modelAllowed } from '../accounts/key-policy.ts';
import { modelKind } from '../../core/catalog/models.ts';

// What GET /v1/models lists: every model an enabled channel serves (a channel serving `*` adds
// every priced model), that the key's policy and its account's group let it use, with its kind,
// endpoints and the price its account pays (its group's).

export type ModelKind = 'text' | 'image' | 'video' | 'avatar';

const ENDPOINTS: Record<ModelKind, string[]> = {
  text: ['/v1/chat/completions', '/v1/messages', '/v1beta/models/{model}:generateContent', '/gemini/v1beta/models/{model}:generateContent'],
  image: ['/v1/images/generations'],
  video: ['/v1/videos/generations'],
  avatar: ['/v1/seedance2/private-avatar'],
};

export const kindOf = (id: string): ModelKind => modelKind(id);

export interface ListedModel {
  id: string;
  kind: ModelKind;
  created: number;
}

/** The models `key` may use, sorted by id. */
export async function modelsForKey(ctx: AppContext, key: CachedKey): Promise<ListedModel[]> {
  const seen = new Map<string, number>();
  for (const channel of await ctx.channels.all()) {
    if (channel.status !== 'enabled') continue;
    const ids = channel.models.has('*') ? Object.keys(ctx.pricing.table().models) : channel.models;
    for (const id of ids) seen.set(id, Math.min(seen.get(id) ?? Infinity, channel.created_at));
  }
  return [...seen]
    .filter(([id]) => modelAllowed(key.policy, id) && ctx.groups.allows(key.group, id))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, createdMs]) => ({ id, kind: kindOf(id), created: Math.floor(createdMs / 1000) }));
}

/** One entry that both the OpenAI SDK (Model) and the messages SDK (ModelInfo) read, plus ours. */
export function modelEntry(ctx: AppContext, key: CachedKey, model: ListedModel) {
  return {
    id: model.id,
    object: 'model' as const,
    type: 'model' as const,
    created: model.created,
    created_at: new Date(model.created * 1000).toISOString(),
    owned_by: 'generation-gateway',
    display_name: model.id,
    kind: model.kind,
    endpoints: ENDPOINTS[model.kind],
    pricing: ctx.groups.forGroup(key.group).table().models[model.id] ?? null,
  };
}

/** The Gemini API's Model resource, for the text models (GET /gemini/v1beta/models). */
export const geminiModel = (model: ListedModel) => ({
  name: `models/${model.id}`,
  baseModelId: model.id,
  version: '1',
  displayName: model.id,
  supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
});
