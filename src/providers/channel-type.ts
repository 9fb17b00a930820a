import { Type, type Static, type TObject, type TProperties, type TSchema } from 'typebox';
import type { ProviderSettings } from '../core/provider-settings.ts';
import type { ReviewedAssets } from '../core/reviewed-assets.ts';
import type { Channel } from '../core/channel.ts';
import type { TaskPrices } from '../core/prices.ts';
import type { TextProvider } from '../core/text/provider.ts';
import type { FetchLimits } from './openai/openai.references.ts';
import type { TaskProvider } from '../core/task-provider.ts';

// What a channel type declares about itself: one entry per folder under src/providers/, listed once
// in registry.ts. Nothing else in the code base names channel types.

export type Serves = 'text' | 'image' | 'video' | 'avatar';

export interface ProviderDeps {
  config: Readonly<ProviderSettings>;
  pricing: TaskPrices;
  /** Earlier avatar reviews, for providers that map our asset ids to an upstream's (ModelArk's asset library). */
  reviewed?: ReviewedAssets;
  /** The process's reference-download rules (memory budget, spool, download slots), shared by every channel type. */
  references: FetchLimits;
  /** Our inbound URL for an upstream's callback about a task; undefined when upstream callbacks are off. */
  upstreamCallbackUrl?(taskId: string): string | undefined;
}

/** What a type's connection test gets: the channel, and one tiny text call when it serves a text model. */
export interface ConnectionProbe {
  channel: Channel;
  timeoutMs: number;
  /** Says what answered, or undefined when the channel serves no text model to ask. */
  text(): Promise<string | undefined>;
}

/** `O` is the type's options schema: its providers read the stored options as `Static<O>`. */
export interface ChannelTypeEntry<O extends TObject = TObject> {
  type: string;
  /** One line for the CLI help, the console and the OpenAPI document. */
  summary: string;
  serves: readonly Serves[];
  baseUrl: 'required' | 'none';
  /** The channel's `options`: a closed object; fields marked `writeOnly` are secrets, never shown back. */
  options: O;
  /** One instance per type (channels carry their own URL and secret per call). */
  taskProvider?(deps: ProviderDeps): TaskProvider;
  /** The text provider for one channel row and its parsed options. */
  textProvider?(channel: Channel, options: Static<O>, config: Readonly<ProviderSettings>): TextProvider | undefined;
  /** One small real call; resolves to what the console shows, throws what went wrong. */
  test(probe: ConnectionProbe): Promise<string>;
}

/** An entry whose providers read its options as its schema has them (the schema's type is inferred). */
export const defineChannelType = <O extends TObject>(entry: ChannelTypeEntry<O>): ChannelTypeEntry<O> => entry;

/** A closed options object. */
export const Options = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false });

/** Marks an option as a secret: stored and used, shown back only as `has_<field>: true`. */
export const secret = <T extends TSchema>(schema: T): T => ({ ...schema, writeOnly: true });

export function secretFields(entry: ChannelTypeEntry): string[] {
  return Object.entries(entry.options.properties)
    .filter(([, schema]) => (schema as { writeOnly?: boolean }).writeOnly === true)
    .map(([name]) => name);
}

/** Extra request headers, for an upstream behind a proxy that wants its own credentials. */
export const ExtraHeaders = secret(
  Type.Record(Type.String(), Type.String({ maxLength: 4000 }), {
    propertyNames: { pattern: '^[A-Za-z0-9-]{1,100}$' },
    maxProperties: 20,
    title: 'Extra headers',
    description: "HTTP headers sent on every call to the upstream (e.g. a proxy's credentials); the channel's own auth and framing headers win",
  }),
);

const FRAMING = new Set(['content-type', 'content-length', 'transfer-encoding', 'host', 'connection']);

/** The `headers` option as request headers: lower-cased, framing headers left to the HTTP client. */
export function extraHeaders(options: { headers?: Record<string, string> }): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (!FRAMING.has(name.toLowerCase())) out[name.toLowerCase()] = value;
  }
  return out;
}
