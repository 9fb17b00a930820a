// docs/api.md is written from the OpenAPI document the route schemas make, so the reference in the
// repository can never drift from what the gateway accepts (a test compares the two).

type Schema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  maxItems?: number;
  $ref?: string;
};
type Operation = {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, unknown>[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string }>;
  hide?: boolean;
};
type OpenApi = { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

function typeOf(schema: Schema | undefined): string {
  if (!schema) return '';
  if (schema.$ref) return schema.$ref.split('/').pop() ?? 'object';
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map(typeOf).join(' or ');
  if (schema.type === 'array') return `array of ${typeOf(schema.items) || 'any'}`;
  return [schema.type ?? 'any'].flat().join(' or ');
}

function limits(schema: Schema): string {
  // A field that also takes null (`integer or null`) is bounded by its other member.
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map(limits).filter(Boolean).join('; ');
  const parts: string[] = [];
  if (schema.minimum !== undefined) parts.push(`min ${schema.minimum}`);
  if (schema.maximum !== undefined) parts.push(`max ${schema.maximum}`);
  if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  if (schema.maxItems !== undefined) parts.push(`at most ${schema.maxItems} items`);
  return parts.join(', ');
}

function fieldsTable(schema: Schema): string[] {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) return [];
  const required = new Set(schema.required ?? []);
  const rows = properties.map(([name, field]) => {
    const notes = [field.description, limits(field)].filter(Boolean).join('; ');
    return `| \`${name}\` | ${cell(typeOf(field))} | ${required.has(name) ? 'yes' : ''} | ${cell(notes)} |`;
  });
  return ['| field | type | required | notes |', '|---|---|---|---|', ...rows, ''];
}

function operationMarkdown(method: string, path: string, op: Operation): string[] {
  const lines = [`### \`${method.toUpperCase()} ${path}\``, ''];
  if (op.summary) lines.push(op.summary, '');
  if (op.description) lines.push(op.description, '');
  const auth = (op.security ?? []).flatMap((s) => Object.keys(s));
  if (auth.length > 0) lines.push(`Credentials: ${auth.map((a) => `\`${a}\``).join(' or ')}.`, '');
  const params = op.parameters ?? [];
  if (params.length > 0) {
    lines.push('| parameter | in | type | required | notes |', '|---|---|---|---|---|');
    for (const p of params) lines.push(`| \`${p.name}\` | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? 'yes' : ''} | ${cell(p.description ?? p.schema?.description ?? '')} |`);
    lines.push('');
  }
  const body = op.requestBody?.content?.['application/json']?.schema;
  if (body) {
    const table = fieldsTable(body);
    lines.push(...(table.length > 0 ? ['Body (JSON):', '', ...table] : [`Body (JSON): ${typeOf(body)}.`, '']));
  }
  const statuses = Object.keys(op.responses ?? {}).filter((s) => /^\d{3}$/.test(s));
  if (statuses.length > 0) lines.push(`Answers: ${statuses.join(', ')}.`, '');
  return lines;
}

export function apiMarkdown(doc: OpenApi, intro: string): string {
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op || op.hide) continue;
      const tag = op.tags?.[0] ?? 'other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push(...operationMarkdown(method, path, op));
    }
  }
  const out = [intro.trim(), ''];
  for (const [tag, lines] of byTag) out.push(`## ${tag}`, '', ...lines);
  return `${out.join('\n').trimEnd()}\n`;
}
