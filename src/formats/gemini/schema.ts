// Gemini's OpenAPI-style `Schema` (upper-case type names) read as plain JSON Schema.
import { InvalidTextField, isObject, type Json } from '../../core/text/index.ts';

/** Deeper than any real schema; a bound keeps a hostile body from exhausting the stack. */
const MAX_DEPTH = 64;

/** Lower-cases `type` values at every level; everything else is already JSON Schema. */
export const jsonSchemaOf = (v: unknown, field: string, depth = 0): unknown => {
  if (depth > MAX_DEPTH) throw new InvalidTextField(field, `is nested more than ${MAX_DEPTH} levels deep`);
  if (Array.isArray(v)) return v.map((x) => jsonSchemaOf(x, field, depth + 1));
  if (!isObject(v)) return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'type' && typeof x === 'string') out[k] = x.toLowerCase();
    else if (k === 'properties' && isObject(x)) out[k] = Object.fromEntries(Object.entries(x).map(([p, s]) => [p, jsonSchemaOf(s, field, depth + 1)]));
    else out[k] = isObject(x) || Array.isArray(x) ? jsonSchemaOf(x, field, depth + 1) : x;
  }
  return out;
};
