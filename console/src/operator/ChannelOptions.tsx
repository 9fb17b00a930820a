import type { ChannelTypeInfo } from '../api.ts';

// The option fields of the chosen channel type, drawn from its schema (GET /admin/channel-types):
// the gateway's registry decides which fields there are, the form only renders them. A secret
// field is never filled from the server; left empty it keeps the stored value.

interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  writeOnly?: boolean;
}

/** What the inputs hold: text per field (objects as JSON). */
export type OptionDrafts = Record<string, string>;

const fieldsOf = (info?: ChannelTypeInfo) => Object.entries(((info?.options as { properties?: Record<string, FieldSchema> })?.properties ?? {}));

/** The inputs for a channel's stored options; secret ones stay empty. */
export function optionDrafts(options: Record<string, unknown>): OptionDrafts {
  const drafts: OptionDrafts = {};
  for (const [name, value] of Object.entries(options)) {
    if (!name.startsWith('has_')) drafts[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return drafts;
}

/**
 * The `options` to send. Creating: only the filled fields. Editing: an emptied plain field is
 * cleared (null); an empty secret field is left out, which keeps the stored one.
 */
export function optionsBody(info: ChannelTypeInfo | undefined, drafts: OptionDrafts, editing: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, schema] of fieldsOf(info)) {
    const text = (drafts[name] ?? '').trim();
    if (text === '') {
      if (editing && !schema.writeOnly) body[name] = null;
      continue;
    }
    if (schema.type === 'object') {
      try {
        body[name] = JSON.parse(text);
      } catch {
        throw new Error(`${schema.title ?? name} must be a JSON object, e.g. {"header-name": "value"}`);
      }
    } else body[name] = schema.type === 'integer' || schema.type === 'number' ? Number(text) : text;
  }
  return body;
}

export function OptionFields(props: { info?: ChannelTypeInfo; drafts: OptionDrafts; stored?: Record<string, unknown>; onChange(drafts: OptionDrafts): void }) {
  return (
    <>
      {fieldsOf(props.info).map(([name, schema]) => {
        const set = props.stored?.[`has_${name}`] === true;
        const label = `${schema.title ?? name}${schema.type === 'object' ? ' (JSON)' : ''}${schema.writeOnly ? ' (secret)' : ''}`;
        return (
          <label key={name} data-testid={`option-${name}`} title={schema.description}>
            {label}
            <input
              value={props.drafts[name] ?? ''}
              onChange={(e) => props.onChange({ ...props.drafts, [name]: e.target.value })}
              type={schema.writeOnly && schema.type !== 'object' ? 'password' : 'text'}
              autoComplete="off"
              placeholder={set ? 'set (empty keeps it)' : schema.type === 'object' ? '{}' : ''}
            />
          </label>
        );
      })}
    </>
  );
}
