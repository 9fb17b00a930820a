// Field readers for the request decoders: each failure names the field the caller got wrong.
import { InvalidTextField } from './errors.ts';

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

export const obj = (v: unknown, field: string): Json => {
  if (!isObject(v)) throw new InvalidTextField(field, 'must be an object');
  return v;
};

export const arr = (v: unknown, field: string): unknown[] => {
  if (!Array.isArray(v)) throw new InvalidTextField(field, 'must be an array');
  return v;
};

export const str = (v: unknown, field: string): string => {
  if (typeof v !== 'string') throw new InvalidTextField(field, 'must be a string');
  return v;
};

export const optStr = (v: unknown, field: string): string | undefined => (v === undefined || v === null ? undefined : str(v, field));

export const optNum = (v: unknown, field: string): number | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new InvalidTextField(field, 'must be a number');
  return v;
};

export const optBool = (v: unknown, field: string): boolean | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new InvalidTextField(field, 'must be a boolean');
  return v;
};

/** `stop` fields take one string or a list. */
export const optStrings = (v: unknown, field: string): string[] | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return [v];
  return arr(v, field).map((s, i) => str(s, `${field}[${i}]`));
};

export const unknownType = (field: string, type: unknown): InvalidTextField =>
  new InvalidTextField(field, `unsupported type ${JSON.stringify(type)}`);

/** Drops undefined members so encoded bodies carry only what was set. */
export const compact = <T extends Json>(o: T): T => {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
};
