import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.ts';
import { claimMeta, getMeta, setMeta } from '../../db/meta.ts';
import type { Channel } from '../../core/channel.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { newId } from '../../lib/ids.ts';
import { checkOptions, checkServedModels, knownType, mergeOptions, optionsView, type ChannelOptions } from './channel-options.ts';
import { deleteChannel, getChannel, insertChannel, listChannels, updateChannel } from './channels.repo.ts';


export interface ChannelInput {
  name: string;
  type: string;
  base_url?: string | null;
  secret?: string | null;
  models: string[];
  model_mapping?: Record<string, string>;
  priority?: number;
  weight?: number;
  status?: 'enabled' | 'disabled';
  options?: ChannelOptions;
}

/** Admin views never carry the secret, only whether one is set. */
export function channelView(channel: Channel) {
  return {
    id: channel.id,
    name: channel.name,
    type: channel.type,
    base_url: channel.base_url,
    has_secret: Boolean(channel.secret),
    models: [...channel.models],
    model_mapping: Object.fromEntries(channel.model_mapping),
    priority: channel.priority,
    weight: channel.weight,
    status: channel.status,
    options: optionsView(channel.type, channel.options),
    health: healthView(channel),
    created_at: Math.floor(channel.created_at / 1000),
  };
}

/** What the task engine saw of the channel (tasks/channel-health.ts). */
function healthView(channel: Channel) {
  return {
    needs_attention: channel.needs_attention === 1,
    consecutive_failures: channel.health_failures,
    last_error: channel.health_error,
    last_error_at: channel.health_error_at === null ? null : Math.floor(channel.health_error_at / 1000),
  };
}

/** Checks a channel as it will be stored: its type, base URL, models and options (as the type's registry entry says). */
function checkChannel(input: { type: string; base_url?: string | null; options: ChannelOptions; models?: Iterable<string> }): ChannelOptions {
  const entry = knownType(input.type);
  if (input.models) checkServedModels(entry, input.models);
  if (input.base_url) {
    let url: URL;
    try {
      url = new URL(input.base_url);
    } catch {
      throw badRequest('base_url must be an http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('base_url must be an http(s) URL');
    // The adapters append their paths to it and send only its origin and path: user info would never
    // be sent (yet shown back in every listing), a query or fragment would end up inside the path.
    if (url.username || url.password || url.search || url.hash || input.base_url.includes('?') || input.base_url.includes('#')) {
      throw badRequest('base_url must be an origin and path only, without user info, query or fragment: credentials go in secret or options.headers');
    }
  }
  if (entry.baseUrl === 'required' && !input.base_url) throw badRequest(`base_url is required for a ${input.type} channel`);
  return checkOptions(entry, input.options);
}

export async function createChannel(db: Kysely<Database>, input: ChannelInput) {
  const options = checkChannel({ ...input, options: mergeOptions({}, input.options ?? {}) });
  const now = Date.now();
  const id = newId('ch');
  await insertChannel(db, {
    id,
    name: input.name,
    type: input.type,
    base_url: input.base_url?.replace(/\/+$/, '') ?? null,
    secret: input.secret ?? null,
    models: JSON.stringify(input.models),
    model_mapping: JSON.stringify(input.model_mapping ?? {}),
    priority: input.priority ?? 0,
    weight: input.weight ?? 1,
    status: input.status ?? 'enabled',
    options: JSON.stringify(options),
    created_at: now,
    updated_at: now,
  });
  return channelView((await getChannel(db, id))!);
}

export async function changeChannel(db: Kysely<Database>, id: string, input: Partial<ChannelInput>) {
  const existing = await getChannel(db, id);
  if (!existing) throw notFound(`No channel ${id}`);
  // A field left out (or undefined, as the CLI passes it) keeps the stored value, also for the check.
  // Another type starts from no options: the old type's settings mean nothing to it.
  const type = input.type ?? existing.type;
  const stored = type === existing.type ? existing.options : {};
  const options = checkChannel({
    type,
    base_url: input.base_url === undefined ? existing.base_url : input.base_url,
    // Checked when the models or the type change: a channel stored before can still be renamed or disabled.
    models: input.models ?? (input.type === undefined ? undefined : existing.models),
    options: input.options === undefined ? stored : mergeOptions(stored, input.options),
  });
  const { name, base_url, secret, models, model_mapping, priority, weight, status } = input;
  // A new secret, address or options is the operator's answer to a 401/403: the mark is cleared.
  const reconnected = secret !== undefined || base_url !== undefined || input.options !== undefined || type !== existing.type;
  await updateChannel(db, id, {
    ...(reconnected ? { needs_attention: 0, health_failures: 0 } : {}),
    name,
    type,
    secret,
    priority,
    weight,
    status,
    base_url: base_url === undefined ? undefined : (base_url?.replace(/\/+$/, '') ?? null),
    models: models && JSON.stringify(models),
    model_mapping: model_mapping && JSON.stringify(model_mapping),
    options: JSON.stringify(options),
  });
  return channelView((await getChannel(db, id))!);
}

export async function removeChannel(db: Kysely<Database>, id: string) {
  if (!(await deleteChannel(db, id))) throw notFound(`No channel ${id}`);
  return { id, deleted: true };
}

export async function findChannels(db: Kysely<Database>) {
  return (await listChannels(db)).map(channelView);
}

/**
 * First start: one simulator channel serving every model, claimed atomically across processes.
 * Later starts add models that are new in the catalogue (not ones an operator removed).
 */
export async function ensureSimulatorChannel(db: Kysely<Database>, models: string[]): Promise<void> {
  if (await claimMeta(db, 'simulator_channel', String(Date.now()))) {
    const channel = await createChannel(db, { name: 'simulator', type: 'simulator', models, priority: 0, weight: 1 });
    await setMeta(db, 'simulator_channel', channel.id);
    await setMeta(db, 'catalogue_models', JSON.stringify(models));
    return;
  }
  const known = new Set(JSON.parse((await getMeta(db, 'catalogue_models')) ?? '[]') as string[]);
  const added = models.filter((m) => !known.has(m));
  if (added.length === 0) return;
  const id = await getMeta(db, 'simulator_channel');
  const channel = id ? await getChannel(db, id) : undefined;
  if (channel) {
    const served = channel.models;
    await updateChannel(db, channel.id, { models: JSON.stringify([...new Set([...served, ...added])]) });
  }
  await setMeta(db, 'catalogue_models', JSON.stringify(models));
}
