import { isStoreUnavailable } from './errors.ts';

// What the operator is told when the database cannot be used at start. The errors themselves and
// the outage classification live in errors.ts.

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
