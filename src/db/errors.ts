// Errors of the database layer. A failure of a backing store (Postgres, Redis, a busy SQLite file)
// rather than of a request: the caller gets 503 and may retry, the process keeps running, and
// service resumes by itself.

/** No connection could be had, so nothing was sent: the work may be retried without doubt. */
export class NotConnected extends Error {
  constructor(readonly reason: unknown) {
    super(`no database connection: ${reason instanceof Error ? reason.message : String(reason)}`);
    this.name = 'NotConnected';
  }
}

/**
 * Thrown by a whole-batch write when it is certain that nothing of the batch was kept (the database
 * answered with an error to a statement outside any transaction, or a local transaction rolled
 * back): only then may the careful path write the batch. Any other failure (a connection lost while
 * the statement may have committed) fails the batch instead, so nothing is ever written twice.
 */
export class WholeBatchRefused extends Error {
  constructor(readonly reason: unknown) {
    super(`whole batch refused: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

// SQLSTATE classes 08 (connection exception) and 57P (operator intervention: terminated, shutting
// down, cannot connect now), 53300 (too many connections), 40001/40P01 under load are retryable
// by the caller too, but are answered by the careful paths, not here.
const PG_UNAVAILABLE = /^(08|57P0[1-4]|53300)/;

const MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Client was closed and is not queryable',
  'Connection is closed',
  "Stream isn't writeable",
  'Reached the max retries per request limit',
  'database is locked',
];

export function isStoreUnavailable(error: unknown): boolean {
  if (error instanceof NotConnected) return true;
  if (error === null || typeof error !== 'object') return false;
  const { code, message, name } = error as { code?: unknown; message?: unknown; name?: unknown };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || PG_UNAVAILABLE.test(code) || code === 'SQLITE_BUSY')) return true;
  if (name === 'MaxRetriesPerRequestError') return true;
  return typeof message === 'string' && MESSAGES.some((m) => message.includes(m));
}
