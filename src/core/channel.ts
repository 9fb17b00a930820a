// A configured upstream as routing and providers see it: the channel row parsed once, by the
// channels repository, so nothing downstream parses a JSON column or guesses its shape.

/** A channel type's own settings, as its registry entry's schema checked them when they were written. */
export type ChannelOptions = Readonly<Record<string, unknown>>;

export interface Channel<Options = ChannelOptions> {
  id: string;
  name: string;
  type: string;
  base_url: string | null;
  secret: string | null;
  /** The model ids it serves (`*` for any). */
  models: ReadonlySet<string>;
  /** Our model id -> the upstream's name for it. */
  model_mapping: ReadonlyMap<string, string>;
  priority: number;
  weight: number;
  status: 'enabled' | 'disabled';
  options: Options;
  /** Submits in a row that failed before the upstream accepted them. */
  health_failures: number;
  health_error: string | null;
  health_error_at: number | null;
  /** 1 after the upstream refused the channel's credentials, until it accepts a task or the channel is changed. */
  needs_attention: number;
  created_at: number;
  updated_at: number;
}

/** The name the upstream knows our model by. */
export const upstreamModelName = (channel: Channel<unknown>, model: string): string => channel.model_mapping.get(model) ?? model;

/** Shorter secrets are not looked for: replacing every short run of letters would garble the message. */
const SECRET_MIN = 8;

/** What the channel sends upstream as credentials: its secret and its extra headers' values (`options.headers`). */
function credentialsOf(channel: Pick<Channel<unknown>, 'secret' | 'options'>): string[] {
  const headers = (channel.options as { headers?: unknown } | null)?.headers;
  const values = headers && typeof headers === 'object' ? Object.values(headers).filter((v): v is string => typeof v === 'string') : [];
  return [channel.secret ?? '', ...values].filter((v) => v.length >= SECRET_MIN);
}

/**
 * `text` (an upstream's refusal, as the caller and the call log get it) without the channel's
 * credentials: some upstreams echo what they were sent in their error messages.
 */
export function withoutChannelSecret(channel: Pick<Channel<unknown>, 'secret' | 'options'>, text: string): string {
  let out = text;
  for (const credential of credentialsOf(channel)) if (out.includes(credential)) out = out.split(credential).join('[redacted]');
  return out;
}
