import type { Kysely } from 'kysely';
import { atOnceFor } from '../../db/db.ts';
import { rowsInserter } from '../../db/at-once.ts';
import { isGeneratedRequestId, nextRequestId } from '../../lib/request-ids.ts';
import { WholeBatchRefused } from '../../db/errors.ts';
import type { CallsTable, Database } from '../../db/types.ts';

// The call log's SQL: the batched insert, the pages read newest first, the sweeper's deletes.

export type CallRow = CallsTable;
export type CallRead = CallRow & { key_name: string | null };

const COLUMNS = [
  'id', 'time', 'user_id', 'key_id', 'model', 'surface', 'channel_id', 'channel_name', 'channel_type', 'status',
  'http_status', 'error', 'latency_ms', 'first_token_ms', 'usage', 'cost', 'task_id', 'bodies',
] as const satisfies readonly (keyof CallRow)[];
// SQLite: statements of four fixed sizes, each prepared once.
const insertRows = rowsInserter<CallRow>('calls', COLUMNS, [64, 16, 4, 1], ' on conflict (id) do nothing');

/**
 * Multi-row INSERTs of the rows under ids this gateway made (unique); a row under a caller's
 * x-request-id, which the caller may send again (or another account may send too), is written
 * alone and, if its id is taken, kept under `<id>~<a new id>`: every call has its row.
 */
export async function insertCalls(db: Kysely<Database>, rows: CallRow[]): Promise<void> {
  const callers = rows.filter((row) => !isGeneratedRequestId(row.id));
  await insertUnique(db, callers.length === 0 ? rows : rows.filter((row) => isGeneratedRequestId(row.id)));
  for (const row of callers) {
    const written = await db.insertInto('calls').values(row).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst();
    if (Number(written.numInsertedOrUpdatedRows ?? 0) === 0) await db.insertInto('calls').values({ ...row, id: `${row.id}~${nextRequestId()}` }).execute();
  }
}

async function insertUnique(db: Kysely<Database>, rows: CallRow[]): Promise<void> {
  if (rows.length === 0) return;
  const atOnce = atOnceFor(db);
  const slow = () => db.insertInto('calls').values(rows).onConflict((oc) => oc.column('id').doNothing()).execute();
  if (!atOnce) {
    await slow();
    return;
  }
  try {
    atOnce((statement) => insertRows(statement, rows));
  } catch (err) {
    // A transaction was open on the write connection at that moment: the ordinary way waits for it.
    if (!(err instanceof WholeBatchRefused)) throw err;
    await slow();
  }
}


export interface CallFilter {
  user_id?: string;
  key_id?: string;
  model?: string;
  channel_id?: string;
  status?: string;
  from?: number;
  to?: number;
  /** The last row of the previous page: rows strictly older (time, then id). */
  after?: { time: number; id: string };
  limit: number;
}

const reads = (db: Kysely<Database>) =>
  db.selectFrom('calls').leftJoin('api_keys', 'api_keys.id', 'calls.key_id').selectAll('calls').select('api_keys.name as key_name');

export async function listCalls(db: Kysely<Database>, f: CallFilter): Promise<CallRead[]> {
  let q = reads(db);
  if (f.user_id !== undefined) q = q.where('calls.user_id', '=', f.user_id);
  if (f.key_id !== undefined) q = q.where('calls.key_id', '=', f.key_id);
  if (f.model !== undefined) q = q.where('calls.model', '=', f.model);
  if (f.channel_id !== undefined) q = q.where('calls.channel_id', '=', f.channel_id);
  if (f.status !== undefined) q = q.where('calls.status', '=', f.status);
  if (f.from !== undefined) q = q.where('calls.time', '>=', f.from);
  if (f.to !== undefined) q = q.where('calls.time', '<', f.to);
  const after = f.after;
  if (after) q = q.where((eb) => eb.or([eb('calls.time', '<', after.time), eb.and([eb('calls.time', '=', after.time), eb('calls.id', '<', after.id)])]));
  return (await q.orderBy('calls.time', 'desc').orderBy('calls.id', 'desc').limit(f.limit).execute()) as CallRead[];
}

export async function getCall(db: Kysely<Database>, id: string): Promise<CallRead | undefined> {
  return (await reads(db).where('calls.id', '=', id).executeTakeFirst()) as CallRead | undefined;
}

/**
 * Deletes up to `batch` rows older than `before`: the count deleted and the bodies those rows named.
 * Several processes may run it at once: each row is deleted by one of them, the others find it gone.
 */
export async function sweepCalls(db: Kysely<Database>, before: number, batch: number): Promise<{ deleted: number; bodies: string[] }> {
  const rows = await db
    .deleteFrom('calls')
    .where('id', 'in', db.selectFrom('calls').select('id').where('time', '<', before).orderBy('time').limit(batch))
    .returning('bodies')
    .execute();
  return { deleted: rows.length, bodies: rows.flatMap((r) => (r.bodies ? [r.bodies] : [])) };
}
