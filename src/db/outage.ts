// Failures of a backing store (Postgres, Redis, a busy SQLite file) rather than of a request: the
// caller gets 503 and may retry, the process keeps running, and service resumes by itself.

/** No connection could be had, so nothing was sent: the work may be retried without doubt. */
export class NotConnected extends Error {
  constructor(readonly reason: unknown) {
    super(`no database connection: ${reason instanceof Error ? reason.message : String(reason)}`);
    this.name = 'NotConnected';
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

/** `host:port/database` of a Postgres URL (no password), or the file of a SQLite one: for messages. */
export function databaseAddress(url: string): string {
  if (url.startsWith('sqlite:')) return url.replace(/^sqlite:(\/\/)?/, '') || ':memory:';
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || 'localhost'}:${parsed.port || 5432}${parsed.pathname}`;
  } catch {
    return 'an unparsable address';
  }
}

const CANNOT_USE = /^(3D000|28|08|57P03)|^(SQLITE_CANTOPEN|EACCES|EROFS|ENOENT|ENOTDIR|EEXIST)$/;

/** A failure to reach or open the database at start, as one line that names the variable. */
export function explainDatabaseError(url: string, error: unknown): Error {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(error);
  if (!isStoreUnavailable(error) && !(typeof code === 'string' && CANNOT_USE.test(code))) return error as Error;
  return new Error(`DATABASE_URL: cannot use the database at ${databaseAddress(url)} (${text})`);
}
