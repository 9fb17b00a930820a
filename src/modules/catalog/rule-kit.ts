import { badRequest } from '../../core/errors.ts';

// Small checks shared by the image and video rules. Each throws a 400 whose message names the field.

export function oneOf<T extends string>(field: string, value: string, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) throw badRequest(`${field} must be one of ${allowed.join(', ')} (got "${value}")`);
  return value as T;
}

export function inRange(field: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw badRequest(`${field} must be an integer from ${min} to ${max} (got ${value})`);
  return value;
}

export function atMost(field: string, list: unknown[] | undefined, max: number): void {
  if (list && list.length > max) throw badRequest(`${field} takes at most ${max} entries (got ${list.length})`);
}

/**
 * Characters as prompt limits count them: Unicode code points, so an emoji (two UTF-16 units in
 * a JS string) is one. A loop rather than [...s]: a prompt may be megabytes long.
 */
export function characters(value: string): number {
  let count = value.length;
  for (let i = 0; i < value.length - 1; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

/** A text field of at most `max` characters (code points); the 400 reports the caller's count. */
export function atMostCharacters(field: string, value: string, max: number, scope = ''): void {
  // Never more code points than UTF-16 units: a short string needs no count.
  if (value.length <= max) return;
  const count = characters(value);
  if (count > max) throw badRequest(`${field} must be at most ${max} characters${scope} (got ${count})`);
}

export function notTogether(a: string, b: string, present: boolean): void {
  if (present) throw badRequest(`${a} and ${b} must not be sent together`);
}

const ASSET = /^asset:\/\/([A-Za-z0-9_-]{1,100})$/;

export function assetId(url: string): string | undefined {
  return ASSET.exec(url)?.[1];
}

/** A media reference: an http(s) URL, a data: URL when `allowData`, or an asset URL when `allowAsset`. */
export function mediaUrl(field: string, url: string, options: { allowAsset: boolean; allowData?: boolean }): void {
  if (url.startsWith('asset://')) {
    if (!options.allowAsset) throw badRequest(`${field}: asset URLs are accepted only by vidgen-2.0 and vidgen-2.0-fast`);
    if (!assetId(url)) throw badRequest(`${field}: "${url.slice(0, 80)}" is not a valid asset URL`);
    return;
  }
  if (options.allowData && url.startsWith('data:')) return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest(`${field}: "${url.slice(0, 80)}" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw badRequest(`${field}: only http(s) URLs are accepted`);
}

export const lower = (value: string | undefined) => value?.toLowerCase();
