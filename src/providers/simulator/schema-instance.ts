// A value that a JSON Schema accepts, made from the schema alone, so the simulator can answer a
// structured-output request or a forced tool call with something the caller's parser takes:
// every property present, enums and consts honoured, the smallest lengths and counts allowed.

type Schema = Record<string, any>;
const MAX_DEPTH = 12;

function resolve(schema: Schema, root: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let at: any = root;
  for (const step of ref.slice(2).split('/')) at = at?.[step.replace(/~1/g, '/').replace(/~0/g, '~')];
  return at && typeof at === 'object' ? { ...at, ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== '$ref')) } : {};
}

function typeOf(schema: Schema): string | undefined {
  if (Array.isArray(schema.type)) return schema.type.find((t: string) => t !== 'null') ?? 'null';
  if (typeof schema.type === 'string') return schema.type;
  if (schema.properties) return 'object';
  if (schema.items) return 'array';
  return undefined;
}

function text(schema: Schema): string {
  if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
  if (schema.format === 'date') return '2026-01-01';
  if (schema.format === 'email') return 'sim@example.com';
  if (schema.format === 'uri' || schema.format === 'url') return 'https://example.com/';
  if (schema.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
  const min = Number.isInteger(schema.minLength) ? schema.minLength : 0;
  return 'simulated'.padEnd(min, '.').slice(0, Number.isInteger(schema.maxLength) ? Math.max(schema.maxLength, min) : undefined);
}

function number(schema: Schema, integer: boolean): number {
  const low = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : undefined;
  const high = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 1 : undefined;
  const value = low ?? (high !== undefined ? Math.min(1, high) : 1);
  return integer ? Math.ceil(value) : value;
}

export function instanceOf(schema: unknown, root: Schema = (schema as Schema) ?? {}, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > MAX_DEPTH) return null;
  const s = resolve(schema as Schema, root);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if ('default' in s) return s.default;
  const choice = s.anyOf ?? s.oneOf;
  if (Array.isArray(choice) && choice.length) return instanceOf(choice.find((c: Schema) => typeOf(resolve(c, root)) !== 'null') ?? choice[0], root, depth + 1);
  if (Array.isArray(s.allOf) && s.allOf.length) return Object.assign({}, ...s.allOf.map((part: Schema) => instanceOf(part, root, depth + 1)));
  switch (typeOf(s)) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [name, property] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) out[name] = instanceOf(property, root, depth + 1);
      return out;
    }
    case 'array': {
      const count = Math.max(Number.isInteger(s.minItems) ? s.minItems : 1, 1);
      if (Array.isArray(s.prefixItems)) return s.prefixItems.map((item: Schema) => instanceOf(item, root, depth + 1));
      return Array.from({ length: Number.isInteger(s.maxItems) ? Math.min(count, s.maxItems) : count }, () => instanceOf(s.items ?? {}, root, depth + 1));
    }
    case 'string':
      return text(s);
    case 'integer':
      return number(s, true);
    case 'number':
      return number(s, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return {};
  }
}
