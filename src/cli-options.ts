import type { parseArgs } from 'node:util';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { ApiError } from './core/errors.ts';
import { knownType } from './modules/channels/channel-options.ts';
import { secretFields } from './providers/channel-type.ts';
import { CHANNEL_TYPES, CHANNEL_TYPE_NAMES } from './providers/registry.ts';

// The gateway command's words: its help, its options, and how an option's text becomes a value
// the same schemas as the HTTP routes check (src/cli.ts runs the commands).

/** The channel types and their --options, from the registry. */
const CHANNEL_TYPES_HELP = CHANNEL_TYPES.map((entry) => {
  const secrets = new Set(secretFields(entry));
  const fields = Object.keys(entry.options.properties).map((f) => (secrets.has(f) ? `${f} (secret)` : f));
  return `    ${entry.type.padEnd(18)}${entry.serves.join(', ')}; options: ${fields.length > 0 ? fields.join(', ') : 'none'}`;
}).join('\n');

export const USAGE = `gateway <command> [options]   (every command prints JSON)

  serve                                   start the HTTP gateway and workers (same as npm start)
  worker                                  run background workers only (no HTTP)
  migrate                                 apply database migrations and exit
  users create --name NAME [--balance N]  create an account (N in the balance unit)
  users list                              list accounts
  users topup ID --amount N               add to an account's balance
  users console-login ID --email E [--password P]
                                          set the account's console sign-in (a password is
                                          generated and printed once when none is given)
  users webhook-secret ID [--rotate]      the account's callback signing secret (--rotate
                                          replaces it; later callbacks use the new one)
  keys create --user ID [--name NAME] (--quota N | --unlimited) [--rpm N] [policy]
                                          create a key; its secret is printed once
  keys list --user ID                     list an account's keys
  keys update ID [--name NAME] [--status active|disabled] [--quota N] [--rpm N] [policy]
                  policy: [--models a,b] [--allowed-ips CIDR,...] [--expires-at UNIX|never]
                  (an empty list, --models '', lifts that limit)
  keys delete ID                          delete a key (refused everywhere within a second)
  channels create --name N --type ${CHANNEL_TYPE_NAMES.join('|')} --models a,b
                  [--base-url U] [--secret S] [--mapping ours=theirs,...] [--priority N] [--weight N]
                  [--options JSON]  the type's own settings, e.g. '{"organization":"org-1"}';
                  secret ones are never printed back (has_<field>: true); on update a field
                  left out keeps its value and null clears it. The types and their options:
${CHANNEL_TYPES_HELP}
  channels list                           list upstream channels (secrets never shown)
  channels update ID [same options as create] [--status enabled|disabled]
  channels delete ID                      remove a channel
  tasks deliveries ID                     a task's callback attempts (refused addresses too)
  tasks redeliver ID                      push a finished task's callback again (a new round)
  codes create --amount N --count N [--uses N] [--expires-at UNIX] [--note TEXT]
                                          make redemption codes (N in the balance unit); each
                                          credits up to --uses accounts (default 1), each once;
                                          the codes are printed once (only their hashes are kept)
  codes list [--batch ID]                 list codes with their use (never the codes themselves)
  codes revoke ID                         revoke a code (what it credited stays)
  invites create [--email E] [--expires-at UNIX]
                                          make a sign-up invite (SIGNUP=invite), bound to E when
                                          given; the code and its link are printed once
  invites list                            list invites with their state (never the codes)
  invites revoke ID                       withdraw an invite (an account it opened stays)
  ledger audit                            recompute every balance from the ledger

Numbers may be negative: --priority -5 (or --priority=-5).

Configuration comes from the environment (see README), e.g. DATABASE_URL.`;

export const OPTIONS = {
  name: { type: 'string' },
  balance: { type: 'string' },
  amount: { type: 'string' },
  user: { type: 'string' },
  quota: { type: 'string' },
  unlimited: { type: 'boolean' },
  rpm: { type: 'string' },
  status: { type: 'string' },
  type: { type: 'string' },
  models: { type: 'string' },
  'base-url': { type: 'string' },
  secret: { type: 'string' },
  mapping: { type: 'string' },
  priority: { type: 'string' },
  weight: { type: 'string' },
  options: { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  'allowed-ips': { type: 'string' },
  'expires-at': { type: 'string' },
  rotate: { type: 'boolean' },
  count: { type: 'string' },
  uses: { type: 'string' },
  note: { type: 'string' },
  batch: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export function num(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new ApiError(400, 'invalid_request_error', `--${name} must be a number`);
  return value;
}

export function need<T>(name: string, value: T | undefined): T {
  if (value === undefined) throw new ApiError(400, 'invalid_request_error', `--${name} is required`);
  return value;
}

const OPTION_OF: Record<string, string> = { allowed_ips: 'allowed-ips', expires_at: 'expires-at', rate_limit_rpm: 'rpm', base_url: 'base-url', model_mapping: 'mapping' };

/** The options checked by the schema of the HTTP route that does the same (an option left out is absent). */
export function checked<T extends TSchema>(schema: T, options: Record<string, unknown>): Static<T> {
  const value = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const errors = [...Value.Errors(schema, value)];
  if (errors.length === 0) return value as Static<T>;
  const field = errors[0]!.instancePath.split('/')[1] ?? '';
  // A choice (status) fails once per allowed value: name them rather than "must be equal to constant".
  const allowed = errors.filter((e) => e.keyword === 'const' && e.instancePath === errors[0]!.instancePath).map((e) => (e.params as { allowedValue: unknown }).allowedValue);
  const message = allowed.length > 0 ? `must be one of ${allowed.join(', ')}` : errors[0]!.message;
  throw new ApiError(400, 'invalid_request_error', `--${OPTION_OF[field] ?? field} ${message}`);
}

export type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

export function channelInput(v: Values) {
  const list = (raw?: string) => (raw === undefined ? undefined : raw.split(',').map((m) => m.trim()).filter(Boolean));
  const mapping = list(v.mapping)?.map((pair) => pair.split('=') as [string, string]);
  return {
    name: v.name,
    // Checked against the registry first, so the refusal lists the known types.
    type: v.type === undefined ? undefined : knownType(v.type).type,
    models: list(v.models),
    base_url: v['base-url'],
    secret: v.secret,
    model_mapping: mapping ? Object.fromEntries(mapping) : undefined,
    priority: num('priority', v.priority),
    weight: num('weight', v.weight),
    options: channelOptions(v.options),
  };
}

export function channelOptions(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
  } catch {
    // reported below
  }
  throw new ApiError(400, 'invalid_request_error', '--options must be a JSON object');
}

/** --models, --allowed-ips, --expires-at as the key routes take them (absent when not given). */
export function keyPolicyInput(v: Values) {
  const list = (raw?: string) => (raw === undefined ? undefined : raw.split(',').map((m) => m.trim()).filter(Boolean));
  const expires = v['expires-at'];
  return { models: list(v.models), allowed_ips: list(v['allowed-ips']), expires_at: expires === 'never' ? null : num('expires-at', expires) };
}


/**
 * `--priority -5`: parseArgs takes a value that starts with a dash for a forgotten value and refuses
 * it as ambiguous; a negative number after an option that takes a value is that option's value.
 */
export function withNegativeValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]!.startsWith('--') ? argv[i]!.slice(2) : undefined;
    const next = argv[i + 1];
    const takesValue = name !== undefined && (OPTIONS as Record<string, { type: string }>)[name]?.type === 'string';
    if (takesValue && next !== undefined && /^-\d/.test(next)) {
      out.push(`${argv[i]}=${next}`);
      i++;
    } else out.push(argv[i]!);
  }
  return out;
}
