// One `Range: bytes=...` span of a file of `size` bytes, as inclusive offsets. A single span that
// starts past the end is `unsatisfiable` (416). Anything else we do not serve as a span (several
// spans, other units, garbage) gives undefined and the whole file is sent: RFC 9110 lets a server
// ignore Range, and a 200 with every byte is always a correct answer.
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || size === 0) return undefined;
  const [, first, last] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    return suffix > 0 ? { start: Math.max(0, size - suffix), end: size - 1 } : 'unsatisfiable';
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}
