// Gemini's OpenAPI-style `Schema` (upper-case type names) read as plain JSON Schema.
import { isObject, type Json } from '../../core/text/index.ts';

/** Lower-cases `type` values at every level; everything else is already JSON Schema. */
export const jsonSchemaOf = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(jsonSchemaOf);
  if (!isObject(v)) return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'type' && typeof x === 'string') out[k] = x.toLowerCase();
    else if (k === 'properties' && isObject(x)) out[k] = Object.fromEntries(Object.entries(x).map(([p, s]) => [p, jsonSchemaOf(s)]));
    else out[k] = isObject(x) || Array.isArray(x) ? jsonSchemaOf(x) : x;
  }
  return out;
};
