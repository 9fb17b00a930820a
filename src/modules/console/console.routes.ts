import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import type { Task } from '../../db/types.ts';
import { notFound, serverError } from '../../core/errors.ts';
import { ErrorResponses, IdParams } from '../../http/schemas.ts';
import { toBalance } from '../../lib/money.ts';
import * as accounts from '../accounts/accounts.service.ts';
import { getUser } from '../accounts/accounts.repo.ts';
import { userBalance } from '../balance/balance.service.ts';
import { getKey } from '../accounts/keys.repo.ts';
import { assertConfirmed } from '../signup/confirmed.ts';
import { AlertBody, Key, CreatedKey } from '../admin/admin.schemas.ts';
import { getTask, kindParams, listTasks } from '../tasks/tasks.repo.ts';
import { taskUsage } from '../tasks/task-record.ts';
import type { TaskResult } from '../../core/task-provider.ts';
import { listAttempts, rotateSigningSecret, signingSecret } from '../webhooks/webhooks.repo.ts';
import * as S from './console.schemas.ts';
import { accountSessionGuard } from './session-guard.ts';
import { findCredentialsByUser } from './sessions.repo.ts';
import { keySpend } from './key-spend.ts';
import { sendUsageCsv } from './usage-export.ts';
import { keyLabels, refusedCallbacks, type KeyLabel } from './task-rows.repo.ts';
import { declareSurface } from '../../http/surface.ts';
import type { AnyKindParams } from '../../core/task-params.ts';

// The account holder's console pages: everything is scoped to the session's account, and another
// account's key or task is a 404, exactly as if it did not exist.

const TASK_PAGE = 50;

// Another account's key or task is a 404; a change past the operator's ceiling (enabling a key the
// operator disabled, widening its limits) a 403.
const KEY_REFUSALS = { 403: ErrorResponses[400], 404: ErrorResponses[400] };

const PROMPT_SHOWN = 1000;

function promptOf(task: Task): string | null {
  const prompt = (kindParams(task).params as AnyKindParams).prompt;
  if (typeof prompt !== 'string' || prompt === '') return null;
  const points = [...prompt];
  return points.length > PROMPT_SHOWN ? `${points.slice(0, PROMPT_SHOWN).join('')}…` : prompt;
}

interface RowExtras {
  keys: Map<string, KeyLabel>;
  refused: Map<string, { url: string; reason: string }>;
}

function taskRow(task: Task, ctx: AppContext, extras: RowExtras) {
  const result = task.result ? (JSON.parse(task.result) as TaskResult) : undefined;
  return {
    id: task.id,
    kind: task.kind,
    model: task.model,
    status: task.status,
    created: Math.floor(task.created_at / 1000),
    cost: task.cost === null ? null : toBalance(task.cost, ctx.config),
    key: extras.keys.get(task.key_id) ?? null,
    prompt: promptOf(task),
    callback: task.webhook,
    callback_refused: extras.refused.get(task.id) ?? null,
    usage: taskUsage(task),
    images: (result?.images ?? []).flatMap((i) => i.url),
    videos: (result?.videos ?? []).flatMap((v) => v.url),
    error: task.error_message,
  };
}

export function consoleRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    declareSurface(app, { envelope: 'standard', keySources: ['session'] });
    app.addHook('preValidation', accountSessionGuard(ctx));
    const doc = <T extends object>(summary: string, extra: T) => ({ ...extra, tags: ['console'], summary, security: [{ consoleSession: [] }] });
    const userId = (request: FastifyRequest) => request.consoleSession!.user_id!;
    async function ownKey(request: FastifyRequest, id: string) {
      const key = await getKey(ctx.db, id);
      if (!key || key.user_id !== userId(request) || key.status === 'deleted') throw notFound(`No key ${id}`);
      return key;
    }
    async function ownTask(request: FastifyRequest, id: string) {
      const task = await getTask(ctx.db, id);
      if (!task || task.user_id !== userId(request)) throw notFound(`No task ${id}`);
      return task;
    }

    app.get('/console/api/account', { schema: doc('The signed-in account and its balance', { response: { 200: S.Account, ...ErrorResponses } }) },
      async (request) => {
        const id = userId(request);
        const [user, credentials] = await Promise.all([getUser(ctx.db, id), findCredentialsByUser(ctx.db, id)]);
        if (!user) throw notFound('This account no longer exists');
        // The numbers of GET /user/balance, from the same service.
        const balance = await userBalance(ctx, id);
        if (!balance.success) throw serverError(balance.message);
        const { remain_balance, remain_credits, used_balance, used_credits } = balance;
        const { alert_below, alert_url } = accounts.userView(ctx, user);
        return { id: user.id, name: user.name, email: credentials?.email ?? null, remain_balance, remain_credits, used_balance, used_credits, alert_below, alert_url, billing_unit: ctx.config.billingUnit };
      });

    app.patch('/console/api/account', { schema: doc('Set the low-balance alert (a signed balance.low event to alert_url)', { body: AlertBody, response: { 200: Type.Object({ alert_below: Type.Union([Type.Number(), Type.Null()]), alert_url: Type.Union([Type.String(), Type.Null()]) }), ...ErrorResponses } }) },
      async (request) => {
        const { alert_below, alert_url } = await accounts.setAlert(ctx, userId(request), request.body);
        return { alert_below, alert_url };
      });

    app.get('/console/api/keys', { schema: doc("The account's keys", { response: { 200: Type.Object({ data: Type.Array(Key) }) } }) },
      async (request) => ({ data: await accounts.findKeys(ctx, userId(request)) }));

    app.post('/console/api/keys', { schema: doc('Create a key (the secret is shown once; 403 until the email is confirmed, and for a rate_limit_rpm above RATE_LIMIT_RPM)', { body: S.NewKeyBody, response: { 201: CreatedKey, 403: ErrorResponses[400], ...ErrorResponses } }) },
      async (request, reply) => {
        await assertConfirmed(ctx, userId(request));
        return reply.status(201).send(await accounts.createKey(ctx, { ...request.body, user_id: userId(request) }, 'account'));
      });

    app.patch('/console/api/keys/:id', { schema: doc("Disable or re-enable a key, turn body capture on or off; narrow its models, addresses and expiry (never past the operator's)", { params: IdParams, body: S.KeyStatusBody, response: { 200: Key, ...KEY_REFUSALS, ...ErrorResponses } }) },
      async (request) => {
        await ownKey(request, request.params.id);
        const { status, log_bodies, models, allowed_ips, expires_at } = request.body;
        return accounts.changeKey(ctx, request.params.id, { status, log_bodies, models, allowed_ips, expires_at }, 'account');
      });

    app.delete('/console/api/keys/:id', { schema: doc('Delete a key (refused by the API from then on)', { params: IdParams, response: { 200: Type.Object({ id: Type.String(), deleted: Type.Boolean() }), 404: ErrorResponses[400], ...ErrorResponses } }) },
      async (request) => {
        await ownKey(request, request.params.id);
        return accounts.deleteKey(ctx, request.params.id);
      });

    app.get('/console/api/usage', { schema: doc('Spend per key: text calls and tasks', { response: { 200: Type.Object({ data: Type.Array(S.KeyUsage) }) } }) },
      async (request) => {
        const id = userId(request);
        const [usage, keys] = await Promise.all([keySpend(ctx.db, id), accounts.findKeys(ctx, id)]);
        const names = new Map(keys.map((k) => [k.id, k]));
        return {
          data: usage.map((u) => ({
            ...u,
            name: names.get(u.key_id)?.name ?? '(deleted key)',
            status: names.get(u.key_id)?.status ?? 'deleted',
            text_cost: toBalance(u.text_cost, ctx.config),
            text_cost_by_class: Object.fromEntries(Object.entries(u.text_cost_by_class).map(([c, units]) => [c, toBalance(units, ctx.config)])) as typeof u.text_cost_by_class,
            task_cost: toBalance(u.task_cost, ctx.config),
          })),
        };
      });

    app.get('/console/api/usage.csv', { schema: doc("The account's text calls and tasks as CSV (streamed): time, key, model, endpoint, tokens, cost, status", { querystring: S.UsageCsvQuery }) },
      (request, reply) => sendUsageCsv(reply, ctx.db, { ...request.query, user_id: userId(request) }, ctx.config));

    app.get('/console/api/tasks', { schema: doc("The account's tasks, newest first (50 a page; `before` = the last id seen)", { querystring: S.TasksQuery, response: { 200: Type.Object({ data: Type.Array(S.TaskRow) }) } }) },
      async (request) => {
        const tasks = await listTasks(ctx.db, { userId: userId(request), before: request.query.before, limit: TASK_PAGE });
        const [keys, refused] = await Promise.all([keyLabels(ctx.db, tasks.map((t) => t.key_id)), refusedCallbacks(ctx.db, tasks.map((t) => t.id))]);
        return { data: tasks.map((t) => taskRow(t, ctx, { keys, refused })) };
      });

    app.get('/console/api/tasks/:id/callbacks', { schema: doc("A task's callback attempts", { params: IdParams, response: { 200: Type.Object({ data: Type.Array(S.Attempt) }), 404: ErrorResponses[400], ...ErrorResponses } }) },
      async (request) => {
        await ownTask(request, request.params.id);
        return { data: await listAttempts(ctx.db, request.params.id) };
      });

    app.get('/console/api/webhook-secret', { schema: doc('The callback signing secret', { response: { 200: S.SigningSecret, ...ErrorResponses } }) },
      async (request) => ({ secret: (await signingSecret(ctx.db, userId(request)))! }));

    app.post('/console/api/webhook-secret/rotate', { schema: doc('Replace the callback signing secret', { response: { 200: S.SigningSecret, ...ErrorResponses } }) },
      async (request) => ({ secret: (await rotateSigningSecret(ctx.db, userId(request)))! }));
  };
}
