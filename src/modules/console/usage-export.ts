import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import type { MoneyFormat } from '../../lib/money.ts';
import { toBalance } from '../../lib/money.ts';
import type { Database } from '../../db/types.ts';
import { keyNamesOf, taskUsagePage, usagePage, type UsageFilter } from './usage.repo.ts';

// Usage export: one CSV row per text call and per task, read a page at a time from both
// tables and merged by time, so an export of any size holds one page of each in memory and the
// first rows go out before the last are read.

export interface UsageRow {
  at: number;
  keyId: string;
  model: string;
  endpoint: string;
  inputTokens: number;
  outputTokens: number;
  /** Ledger units: a text call's charge; a task's settled cost, or its hold while it runs. */
  cost: number;
  status: string;
  id: string;
  /** A text call's other token classes and each class's cost (ledger units); 0 for a task. */
  classes?: TokenClasses;
}

/** The columns after the first ten, in their order: a text call's usage by class (usage table). */
const CLASS_COLUMNS = ['cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'input_cost', 'cache_read_cost', 'cache_write_cost', 'output_cost'] as const;
type TokenClasses = Record<(typeof CLASS_COLUMNS)[number], number>;
const COST_COLUMNS = new Set<string>(['input_cost', 'cache_read_cost', 'cache_write_cost', 'output_cost']);

const PAGE = 500;
const TASK_ENDPOINTS: Record<string, string> = { image: '/v1/images/generations', video: '/v1/videos/generations', avatar: '/v1/seedance2/private-avatar' };

async function* textCalls(db: Kysely<Database>, filter: UsageFilter): AsyncGenerator<UsageRow> {
  for (let after = 0; ; ) {
    const page = await usagePage(db, filter, after, PAGE);
    for (const u of page) {
      const classes = Object.fromEntries(CLASS_COLUMNS.map((c) => [c, Number(u[c] ?? 0)])) as TokenClasses;
      yield { at: Number(u.created_at), keyId: u.key_id, model: u.model, endpoint: u.endpoint, inputTokens: Number(u.input_tokens), outputTokens: Number(u.output_tokens), cost: Number(u.cost), status: u.status, id: u.request_id, classes };
    }
    if (page.length < PAGE) return;
    after = Number(page[page.length - 1]!.id);
  }
}

async function* tasks(db: Kysely<Database>, filter: UsageFilter): AsyncGenerator<UsageRow> {
  for (let after = ''; ; ) {
    const page = await taskUsagePage(db, filter, after, PAGE);
    for (const t of page) {
      const cost = t.cost === null ? Number(t.hold_amount) : Number(t.cost);
      yield { at: Number(t.created_at), keyId: t.key_id, model: t.model, endpoint: TASK_ENDPOINTS[t.kind] ?? t.kind, inputTokens: Number(t.input_tokens ?? 0), outputTokens: Number(t.output_tokens ?? 0), cost, status: t.status, id: t.id };
    }
    if (page.length < PAGE) return;
    after = page[page.length - 1]!.id;
  }
}

/** Both sources merged by time (each is read in id order, which follows time). */
export async function* usageRows(db: Kysely<Database>, filter: UsageFilter): AsyncGenerator<UsageRow> {
  const sources = [textCalls(db, filter), tasks(db, filter)];
  const heads = await Promise.all(sources.map((s) => s.next()));
  for (;;) {
    let pick = -1;
    heads.forEach((head, i) => {
      if (!head.done && (pick < 0 || head.value.at < (heads[pick]!.value as UsageRow).at)) pick = i;
    });
    if (pick < 0) return;
    yield heads[pick]!.value as UsageRow;
    heads[pick] = await sources[pick]!.next();
  }
}

// A spreadsheet runs a cell that starts with one of these as a formula (a tab or a carriage return
// first can hide one). Key names and request ids are chosen by callers, so such a text cell gets a
// leading `'`, which makes it text (the OWASP advice for CSV injection). Numbers are ours and stay
// numbers, a negative one included.
const FORMULA_START = /^[=+\-@\t\r]/;

/** RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled. */
export function csvField(value: string | number): string {
  const text = typeof value === 'number' ? String(value) : FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const CSV_HEADER = ['time', 'key_name', 'key_id', 'model', 'endpoint', 'input_tokens', 'output_tokens', 'cost', 'status', 'id', ...CLASS_COLUMNS];
const line = (fields: (string | number)[]) => `${fields.map(csvField).join(',')}\r\n`;

/** Key names, read once per key seen (bounded: an operator's export may cross many accounts). */
function keyNames(db: Kysely<Database>) {
  const names = new Map<string, string>();
  return async (ids: string[]) => {
    const missing = [...new Set(ids.filter((id) => !names.has(id)))];
    if (missing.length > 0) {
      if (names.size > 10_000) names.clear();
      const rows = await keyNamesOf(db, missing);
      for (const id of missing) names.set(id, rows.find((r) => r.id === id)?.name ?? '');
    }
    return names;
  };
}

/** Sends the CSV as a download; `from`/`to` in Unix seconds as the query strings carry them. */
export function sendUsageCsv(reply: FastifyReply, db: Kysely<Database>, query: { user_id?: string; from?: string; to?: string }, money: MoneyFormat) {
  const seconds = (value?: string) => (value === undefined ? undefined : Number(value) * 1000);
  const name = `usage${query.user_id ? `-${query.user_id}` : ''}-${new Date().toISOString().slice(0, 10)}.csv`;
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name.replace(/[^\w.-]/g, '_')}"`)
    .header('cache-control', 'no-store')
    .send(usageCsv(db, { userId: query.user_id, from: seconds(query.from), to: seconds(query.to) }, money));
}

/**
 * The CSV as a stream of lines, a batch of rows per chunk. The stream is read only as the response
 * drains it (backpressure); and as SQLite reads a page synchronously and a socket that keeps up
 * never pushes back, the next page waits for the event loop to turn once, so a big account's export
 * never holds up other requests for longer than one page.
 */
export function usageCsv(db: Kysely<Database>, filter: UsageFilter, money: MoneyFormat): Readable {
  const names = keyNames(db);
  async function* lines() {
    yield line(CSV_HEADER);
    let batch: UsageRow[] = [];
    const flush = async () => {
      const known = await names(batch.map((r) => r.keyId));
      const classes = (r: UsageRow) => CLASS_COLUMNS.map((c) => (COST_COLUMNS.has(c) ? toBalance(r.classes?.[c] ?? 0, money) : (r.classes?.[c] ?? 0)));
      const text = batch.map((r) => line([new Date(r.at).toISOString(), known.get(r.keyId) ?? '', r.keyId, r.model, r.endpoint, r.inputTokens, r.outputTokens, toBalance(r.cost, money), r.status, r.id, ...classes(r)])).join('');
      batch = [];
      return text;
    };
    for await (const row of usageRows(db, filter)) {
      batch.push(row);
      if (batch.length === PAGE) {
        yield await flush();
        await nextTurn();
      }
    }
    if (batch.length > 0) yield await flush();
  }
  return Readable.from(lines(), { objectMode: false });
}
