// Opaque vendor values (thinking signatures, encrypted reasoning) cross formats wrapped with their origin,
// so a client of another format can hand them back and the gateway still knows whose they are.
import type { OpaqueValue, WireFormat } from './parts.ts';

const PREFIX = 'gw1.';
const FORMATS: readonly WireFormat[] = ['messages', 'chat', 'responses', 'gemini'];

/** The string a format's client receives for an opaque value: bare when the format minted it. */
export const wrapOpaque = (v: OpaqueValue, target: WireFormat): string =>
  v.format === target ? v.value : `${PREFIX}${v.format}.${v.id ?? ''}.${v.value}`;

/** Reads an opaque value a client of `format` sent back: wrapped ones keep the origin they carry. */
export const unwrapOpaque = (s: string, format: WireFormat): OpaqueValue => {
  if (s.startsWith(PREFIX)) {
    const rest = s.slice(PREFIX.length);
    const dot = rest.indexOf('.');
    const dot2 = rest.indexOf('.', dot + 1);
    const origin = rest.slice(0, dot) as WireFormat;
    if (dot > 0 && dot2 > dot && FORMATS.includes(origin)) {
      const id = rest.slice(dot + 1, dot2);
      return { format: origin, value: rest.slice(dot2 + 1), ...(id ? { id } : {}) };
    }
  }
  return { format, value: s };
};
