import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { Database } from './types.ts';
import { rawReaderOf } from './index.ts';

/**
 * A query on the hot path, built and compiled once per database instead of on every request.
 * `build` receives placeholder values; the returned function runs the same SQL with real ones,
 * given in the order the builder used them.
 */
export function preparedQuery<Row, Params extends unknown[]>(build: (db: Kysely<Database>, ...placeholders: Params) => Compilable<Row>) {
  const compiled = new WeakMap<Kysely<Database>, string>();
  return async (db: Kysely<Database>, ...params: Params): Promise<Row[]> => {
    let text = compiled.get(db);
    if (text === undefined) {
      text = build(db, ...params).compile().sql;
      compiled.set(db, text);
    }
    const raw = rawReaderOf(db);
    if (raw) return (await raw(text, params)) as Row[];
    return (await db.executeQuery(CompiledQuery.raw(text, params) as CompiledQuery<Row>)).rows;
  };
}
