// An output the README shows against the one a command printed: the same keys (all of them, unless the
// README elides some with `...`), the same kinds of values, the same booleans. Other values differ
// from run to run (ids, times, amounts) and are not compared.

const MORE = '\u2026';
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Parses a README output, `...` outside strings marking keys it leaves out. */
export function parseShown(text: string): Json {
  let out = '';
  const open: string[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (text.startsWith('...', i)) {
      out += open.at(-1) === '{' ? `"${MORE}":0` : `"${MORE}"`;
      i += 2;
    } else {
      if (c === '"') inString = true;
      else if (c === '{' || c === '[') open.push(c);
      else if (c === '}' || c === ']') open.pop();
      out += c;
    }
  }
  return JSON.parse(out) as Json;
}

/** The JSON a command printed (npm's own `> script` lines before it are skipped), or undefined. */
export function printedJson(stdout: string): Json | undefined {
  const start = stdout.search(/^[[{]/m);
  if (start < 0) return undefined;
  try {
    return JSON.parse(stdout.slice(start)) as Json;
  } catch {
    return undefined;
  }
}

const kind = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** Where `actual` differs in shape from `shown`; empty when it has the same shape. */
export function shapeDifferences(shown: Json, actual: unknown, at = '$'): string[] {
  if (kind(shown) !== kind(actual)) return [`${at}: README shows ${kind(shown)}, got ${kind(actual)}`];
  if (typeof shown === 'boolean' && shown !== actual) return [`${at}: README shows ${shown}, got ${String(actual)}`];
  if (Array.isArray(shown)) {
    const items = actual as unknown[];
    const shownItems = shown.filter((item) => item !== MORE);
    if (items.length < shownItems.length) return [`${at}: README shows ${shownItems.length} items, got ${items.length}`];
    return shownItems.flatMap((item, i) => shapeDifferences(item, items[i], `${at}[${i}]`));
  }
  if (shown === null || typeof shown !== 'object') return [];
  const object = actual as Record<string, unknown>;
  const differences = Object.keys(shown)
    .filter((key) => key !== MORE)
    .flatMap((key) => (key in object ? shapeDifferences(shown[key]!, object[key], `${at}.${key}`) : [`${at}: no key "${key}"`]));
  if (!(MORE in shown)) {
    for (const key of Object.keys(object)) if (!(key in shown)) differences.push(`${at}: key "${key}" the README does not show`);
  }
  return differences;
}
