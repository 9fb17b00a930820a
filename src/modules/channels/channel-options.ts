import { Value } from 'typebox/value';
import { badRequest } from '../../core/errors.ts';
import { secretFields, type ChannelTypeEntry } from '../../providers/channel-type.ts';
import { CHANNEL_TYPE_NAMES, channelType } from '../../providers/registry.ts';
import { modelKind } from '../../core/catalog/models.ts';

// A channel's `options`: checked by its type's schema (the registry entry), secrets kept out of
// every view. Writes merge like a JSON merge patch (RFC 7386): a field left out keeps its value,
// so the console can change one option without sending back secrets it was never shown; null clears.

export type ChannelOptions = Record<string, unknown>;

export function knownType(name: string): ChannelTypeEntry {
  const entry = channelType(name);
  if (!entry) throw badRequest(`type must be one of ${CHANNEL_TYPE_NAMES.join(', ')}`);
  return entry;
}

/** Whether a channel of the type can do `model`'s kind of work; a type no longer in the registry is the task engine's to report. */
export function typeServes(typeName: string, model: string): boolean {
  const entry = channelType(typeName);
  return !entry || model === '*' || entry.serves.includes(modelKind(model));
}

/** A 400 naming the first of `models` the type cannot serve: such a channel would only ever fail its tasks. */
export function checkServedModels(entry: ChannelTypeEntry, models: Iterable<string>): void {
  for (const model of models) {
    if (!typeServes(entry.type, model)) throw badRequest(`models: a ${entry.type} channel serves only ${entry.serves.join(', ')} models, not ${model} (${modelKind(model)})`);
  }
}

export function mergeOptions(stored: ChannelOptions, patch: ChannelOptions): ChannelOptions {
  const merged = { ...stored };
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete merged[name];
    else merged[name] = value;
  }
  return merged;
}

/** The options as the type's schema takes them; a 400 names the first field it refuses. */
export function checkOptions(entry: ChannelTypeEntry, options: ChannelOptions): ChannelOptions {
  const errors = [...Value.Errors(entry.options, options)];
  if (errors.length === 0) return options;
  const fields = Object.keys(entry.options.properties);
  const unknown = errors.find((e) => e.keyword === 'additionalProperties');
  if (unknown) {
    const name = (unknown.params as { additionalProperties: string[] }).additionalProperties[0];
    const takes = fields.length > 0 ? `takes only ${fields.join(', ')}` : 'takes no options';
    return refuse(`Unknown field "options.${name}": a ${entry.type} channel ${takes}`);
  }
  const first = errors.find((e) => e.instancePath !== '') ?? errors[0]!;
  const field = ['options', ...first.instancePath.split('/').filter(Boolean).slice(0, 1)].join('.');
  return refuse(`${field} ${first.message} (a ${entry.type} channel's option)`);
}

const refuse = (message: string): never => {
  throw badRequest(message);
};

/** What admin views show: plain options as stored, each secret only as `has_<field>: true`. */
export function optionsView(typeName: string, options: ChannelOptions): ChannelOptions {
  const entry = channelType(typeName);
  // A type no longer in the registry: nothing is known to be safe to show.
  if (!entry) return {};
  const secrets = new Set(secretFields(entry));
  const view: ChannelOptions = {};
  for (const [name, value] of Object.entries(options)) {
    if (secrets.has(name)) view[`has_${name}`] = true;
    else view[name] = value;
  }
  return view;
}

/** The registry as GET /admin/channel-types shows it (the console's channel form reads this). */
export function channelTypesView(entries: readonly ChannelTypeEntry[]) {
  return entries.map((entry) => ({
    type: entry.type,
    summary: entry.summary,
    serves: [...entry.serves],
    base_url: entry.baseUrl,
    options: entry.options as unknown,
  }));
}
