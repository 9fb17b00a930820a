import type { AppContext } from '../../context.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { toBalance } from '../../lib/money.ts';
import { getCall, listCalls, type CallRead } from './calls.repo.ts';
import type { AdminCallView, CallBodiesView, CallsQuery } from './calls.schemas.ts';

// Reading the call log: a page newest first, cursor by (time, id), and one call. An account holder
// reads only its own account's calls (the filter is the session's, not the query's) and never a
// channel; what this process still has queued is written first, so a caller sees its own calls.

const PAGE = 50;
const MAX_PAGE = 500;

const cursorOf = (row: CallRead) => Buffer.from(`${row.time}:${row.id}`).toString('base64url');

function afterOf(cursor: string): { time: number; id: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const at = text.indexOf(':');
  const time = Number(text.slice(0, at));
  if (at <= 0 || !Number.isSafeInteger(time)) throw badRequest('after: not a cursor this list gave');
  return { time, id: text.slice(at + 1) };
}

export function callView(ctx: Pick<AppContext, 'config'>, row: CallRead): AdminCallView {
  const cost = row.cost ? (JSON.parse(row.cost) as Record<string, number>) : null;
  return {
    id: row.id,
    time: new Date(Number(row.time)).toISOString(),
    user_id: row.user_id,
    key_id: row.key_id,
    key_name: row.key_name,
    model: row.model,
    surface: row.surface,
    channel: row.channel_id ? { id: row.channel_id, name: row.channel_name ?? '', type: row.channel_type ?? '' } : null,
    status: row.status as AdminCallView['status'],
    http_status: Number(row.http_status),
    error: row.error ? JSON.parse(row.error) : null,
    latency_ms: Number(row.latency_ms),
    first_token_ms: row.first_token_ms === null ? null : Number(row.first_token_ms),
    usage: row.usage ? JSON.parse(row.usage) : null,
    cost: cost ? (Object.fromEntries(Object.entries(cost).map(([k, v]) => [k, toBalance(v, ctx.config)])) as AdminCallView['cost']) : null,
    task_id: row.task_id,
    bodies: row.bodies !== null,
  };
}

/** A page of calls; `user_id` set by the console to the session's account. */
export async function findCalls(ctx: AppContext, query: CallsQuery): Promise<{ data: AdminCallView[]; next: string | null }> {
  await ctx.callLog.flush();
  const limit = Math.min(Math.max(Number(query.limit ?? PAGE) || PAGE, 1), MAX_PAGE);
  const rows = await listCalls(ctx.db, {
    ...(query.user_id !== undefined ? { user_id: query.user_id } : {}),
    ...(query.key_id !== undefined ? { key_id: query.key_id } : {}),
    ...(query.model !== undefined ? { model: query.model } : {}),
    ...(query.channel_id !== undefined ? { channel_id: query.channel_id } : {}),
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(query.from !== undefined ? { from: Number(query.from) * 1000 } : {}),
    ...(query.to !== undefined ? { to: Number(query.to) * 1000 } : {}),
    ...(query.after !== undefined ? { after: afterOf(query.after) } : {}),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  return { data: page.map((row) => callView(ctx, row)), next: rows.length > limit ? cursorOf(page[page.length - 1]!) : null };
}

/** One call; another account's is a 404 for an account holder. */
export async function findCall(ctx: AppContext, id: string, userId?: string): Promise<AdminCallView> {
  await ctx.callLog.flush();
  const row = await getCall(ctx.db, id);
  if (!row || (userId !== undefined && row.user_id !== userId)) throw notFound(`No call ${id}`);
  return callView(ctx, row);
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** A call's stored request and answer; none (never kept, or already swept) is a 404, as is another account's call. */
export async function findBodies(ctx: AppContext, id: string, userId?: string): Promise<CallBodiesView> {
  await ctx.callLog.bodies.drain();
  await ctx.callLog.flush();
  const row = await getCall(ctx.db, id);
  if (!row || (userId !== undefined && row.user_id !== userId)) throw notFound(`No call ${id}`);
  const stored = row.bodies ? await ctx.callLog.bodies.read(row.bodies) : undefined;
  if (!stored) throw notFound(`No bodies stored for call ${id}`);
  return { request: parsed(stored.request), response: parsed(stored.response), truncated: stored.truncated.request || stored.truncated.response };
}

/** The account holder's view: the same row without its channel. */
export function withoutChannel({ channel: _channel, ...rest }: AdminCallView): Omit<AdminCallView, 'channel'> {
  return rest;
}
