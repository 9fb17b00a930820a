import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { pathToFileURL } from 'node:url';
import { createContext, type AppContext } from './context.ts';
import { migrateDatabase } from './db/migrations.ts';
import { configOrExit, start, work } from './main.ts';
import * as accounts from './modules/accounts/accounts.service.ts';
import * as channels from './modules/channels/channels.service.ts';
import { setCredentials } from './modules/console/console.service.ts';
import { auditLedger } from './modules/billing/ledger.audit.ts';
import { ApiError } from './http/errors.ts';
import { CreateKeyBody, UpdateKeyBody } from './modules/admin/admin.schemas.ts';
import { CreateChannelBody, UpdateChannelBody } from './modules/channels/channels.schemas.ts';
import { CHANNEL_TYPES, CHANNEL_TYPE_NAMES } from './providers/registry.ts';
import { secretFields } from './providers/channel-type.ts';
import { knownType } from './modules/channels/channel-options.ts';
import { getTask } from './modules/tasks/tasks.repo.ts';
import { redeliver } from './modules/webhooks/redeliver.ts';
import { listAttempts, rotateSigningSecret, signingSecret } from './modules/webhooks/webhooks.repo.ts';

/** The channel types and their --options, from the registry. */
const CHANNEL_TYPES_HELP = CHANNEL_TYPES.map((entry) => {
  const secrets = new Set(secretFields(entry));
  const fields = Object.keys(entry.options.properties).map((f) => (secrets.has(f) ? `${f} (secret)` : f));
  return `    ${entry.type.padEnd(18)}${entry.serves.join(', ')}; options: ${fields.length > 0 ? fields.join(', ') : 'none'}`;
}).join('\n');

const USAGE = `gateway <command> [options]   (every command prints JSON)

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
  ledger audit                            recompute every balance from the ledger

Numbers may be negative: --priority -5 (or --priority=-5).

Configuration comes from the environment (see README), e.g. DATABASE_URL.`;

const OPTIONS = {
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
  help: { type: 'boolean', short: 'h' },
} as const;

function num(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new ApiError(400, 'invalid_request_error', `--${name} must be a number`);
  return value;
}

function need<T>(name: string, value: T | undefined): T {
  if (value === undefined) throw new ApiError(400, 'invalid_request_error', `--${name} is required`);
  return value;
}

const OPTION_OF: Record<string, string> = { allowed_ips: 'allowed-ips', expires_at: 'expires-at', rate_limit_rpm: 'rpm', base_url: 'base-url', model_mapping: 'mapping' };

/** The options checked by the schema of the HTTP route that does the same (an option left out is absent). */
function checked<T extends TSchema>(schema: T, options: Record<string, unknown>): Static<T> {
  const value = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const errors = [...Value.Errors(schema, value)];
  if (errors.length === 0) return value as Static<T>;
  const field = errors[0]!.instancePath.split('/')[1] ?? '';
  // A choice (status) fails once per allowed value: name them rather than "must be equal to constant".
  const allowed = errors.filter((e) => e.keyword === 'const' && e.instancePath === errors[0]!.instancePath).map((e) => (e.params as { allowedValue: unknown }).allowedValue);
  const message = allowed.length > 0 ? `must be one of ${allowed.join(', ')}` : errors[0]!.message;
  throw new ApiError(400, 'invalid_request_error', `--${OPTION_OF[field] ?? field} ${message}`);
}

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function channelInput(v: Values) {
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

function channelOptions(raw: string | undefined): Record<string, unknown> | undefined {
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
function keyPolicyInput(v: Values) {
  const list = (raw?: string) => (raw === undefined ? undefined : raw.split(',').map((m) => m.trim()).filter(Boolean));
  const expires = v['expires-at'];
  return { models: list(v.models), allowed_ips: list(v['allowed-ips']), expires_at: expires === 'never' ? null : num('expires-at', expires) };
}

async function run(ctx: AppContext, words: string[], v: Values): Promise<unknown> {
  const [group, action, id] = words;
  switch (`${group} ${action}`) {
    case 'users create':
      return accounts.createUser(ctx, { name: need('name', v.name), balance: num('balance', v.balance) });
    case 'users list':
      return accounts.findUsers(ctx, 1000);
    case 'users topup':
      return accounts.topUpUser(ctx, need('ID', id), need('amount', num('amount', v.amount)));
    case 'users console-login': {
      const password = v.password ?? randomBytes(12).toString('base64url');
      const set = await setCredentials(ctx, need('ID', id), { email: need('email', v.email), password });
      return v.password === undefined ? { ...set, password } : set;
    }
    case 'keys create':
      return accounts.createKey(ctx, checked(CreateKeyBody, {
        user_id: need('user', v.user),
        name: v.name,
        quota: num('quota', v.quota),
        unlimited: v.unlimited,
        rate_limit_rpm: num('rpm', v.rpm),
        ...keyPolicyInput(v),
      }));
    case 'keys list':
      return accounts.findKeys(ctx, need('user', v.user));
    case 'keys update':
      return accounts.changeKey(ctx, need('ID', id), checked(UpdateKeyBody, { name: v.name, status: v.status, quota: num('quota', v.quota), rate_limit_rpm: num('rpm', v.rpm), ...keyPolicyInput(v) }));
    case 'keys delete':
      return accounts.deleteKey(ctx, need('ID', id));
    case 'channels create':
      return channels.createChannel(ctx.db, checked(CreateChannelBody, { ...channelInput(v), name: need('name', v.name), type: need('type', v.type), models: need('models', channelInput(v).models) }));
    case 'channels list':
      return channels.findChannels(ctx.db);
    case 'channels update':
      return channels.changeChannel(ctx.db, need('ID', id), checked(UpdateChannelBody, { ...channelInput(v), status: v.status }));
    case 'channels delete':
      return channels.removeChannel(ctx.db, need('ID', id));
    case 'users webhook-secret': {
      const userId = need('ID', id);
      const secret = v.rotate ? await rotateSigningSecret(ctx.db, userId) : await signingSecret(ctx.db, userId);
      if (!secret) throw new ApiError(404, 'not_found_error', `No user ${userId}`);
      return { user_id: userId, secret };
    }
    case 'tasks deliveries': {
      const taskId = need('ID', id);
      if (!(await getTask(ctx.db, taskId))) throw new ApiError(404, 'not_found_error', `No task ${taskId}`);
      return listAttempts(ctx.db, taskId);
    }
    case 'tasks redeliver':
      return redeliver(ctx, need('ID', id));
    case 'ledger audit': {
      const mismatches = await auditLedger(ctx.db);
      return { balanced: mismatches.length === 0, mismatches };
    }
  }
  throw new ApiError(400, 'invalid_request_error', `unknown command "${words.join(' ')}"\n\n${USAGE}`);
}

/**
 * `--priority -5`: parseArgs takes a value that starts with a dash for a forgotten value and refuses
 * it as ambiguous; a negative number after an option that takes a value is that option's value.
 */
function withNegativeValues(argv: string[]): string[] {
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

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: withNegativeValues(argv), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    console.error(JSON.stringify({ error: { code: 400, message, type: 'invalid_request_error' } }, null, 2));
    return 1;
  }
  const { values, positionals } = parsed;
  const [command] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command || values.help ? 0 : 1;
  }
  const config = configOrExit();
  if (command === 'serve' || command === 'worker') {
    if (command === 'serve') start(config);
    else await work(config);
    return -1;
  }
  if (command === 'migrate') {
    const applied = await migrateDatabase(config.databaseUrl);
    console.log(JSON.stringify({ applied }, null, 2));
    return 0;
  }
  const ctx = await createContext(config, { listen: false });
  try {
    console.log(JSON.stringify(await run(ctx, positionals, values), null, 2));
    return 0;
  } catch (err) {
    if (err instanceof ApiError) {
      console.error(JSON.stringify({ error: { code: err.status, message: err.message, type: err.type } }, null, 2));
      return 1;
    }
    throw err;
  } finally {
    await ctx.close();
  }
}

/** Runs a command and exits with its code; a failure is one line on stderr, never a stack. */
export function runCli(argv: string[]): void {
  main(argv).then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (err) => {
      console.error(`gateway: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}

const entry = process.argv[1] ?? '';
if (import.meta.url === pathToFileURL(entry).href && /cli\.[jt]s$/.test(entry)) runCli(process.argv.slice(2));
