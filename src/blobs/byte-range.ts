// One `Range: bytes=...` span of a file of `size` bytes, as inclusive offsets. Anything else (several
// spans, other units, a span past the end, garbage) gives undefined and the whole file is sent: RFC 9110
// lets a server ignore Range, and a 200 with every byte is always a correct answer.
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | undefined {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || size === 0) return undefined;
  const [, first, last] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    return suffix > 0 ? { start: Math.max(0, size - suffix), end: size - 1 } : undefined;
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  return start < size && start <= end ? { start, end } : undefined;
}
