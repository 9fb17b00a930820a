import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { createContext, type AppContext } from './context.ts';
import { migrateDatabase } from './db/migrations.ts';
import { configOrExit, start, work } from './main.ts';
import * as accounts from './modules/accounts/accounts.service.ts';
import * as channels from './modules/channels/channels.service.ts';
import * as codes from './modules/codes/codes.service.ts';
import { CreateCodesBody } from './modules/codes/codes.schemas.ts';
import * as invites from './modules/signup/invites.service.ts';
import { CreateInviteBody } from './modules/signup/signup.schemas.ts';
import { setCredentials } from './modules/console/console.service.ts';
import { auditLedger } from './modules/billing/ledger.audit.ts';
import { ApiError } from './core/errors.ts';
import { CreateKeyBody, UpdateKeyBody } from './modules/admin/admin.schemas.ts';
import { CreateChannelBody, UpdateChannelBody } from './modules/channels/channels.schemas.ts';
import { OPTIONS, USAGE, channelInput, checked, keyPolicyInput, need, num, withNegativeValues, type Values } from './cli-options.ts';
import { getTask } from './modules/tasks/tasks.repo.ts';
import { redeliver } from './modules/webhooks/redeliver.ts';
import { listAttempts, rotateSigningSecret, signingSecret } from './modules/webhooks/webhooks.repo.ts';

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
    case 'codes create':
      return codes.createCodes(ctx, checked(CreateCodesBody, {
        amount: need('amount', num('amount', v.amount)),
        count: need('count', num('count', v.count)),
        uses: num('uses', v.uses),
        expires_at: num('expires-at', v['expires-at']),
        note: v.note,
      }));
    case 'codes list':
      return codes.findCodes(ctx, { batchId: v.batch, limit: 1000 });
    case 'codes revoke':
      return codes.revoke(ctx, need('ID', id));
    case 'invites create':
      return invites.createInvite(ctx, checked(CreateInviteBody, { email: v.email, expires_at: num('expires-at', v['expires-at']) }));
    case 'invites list':
      return invites.findInvites(ctx);
    case 'invites revoke':
      return invites.revoke(ctx, need('ID', id));
    case 'ledger audit': {
      const mismatches = await auditLedger(ctx.db);
      return { balanced: mismatches.length === 0, mismatches };
    }
  }
  throw new ApiError(400, 'invalid_request_error', `unknown command "${words.join(' ')}"\n\n${USAGE}`);
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
