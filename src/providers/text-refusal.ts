import { badGateway, badRequest } from '../core/errors.ts';

// A text upstream's refusal (4xx) as the caller's error. Every text vendor puts its message at
// error.message, so one reading serves them all.

/** A refusal body's `error` object (message, code), when it is JSON that has one. */
export function refusalOf(text: string): { message?: unknown; code?: unknown } | undefined {
  try {
    const parsed: { error?: { message?: unknown; code?: unknown } } | null = JSON.parse(text);
    return parsed?.error ?? undefined;
  } catch {
    return undefined;
  }
}

export async function clientError(statusCode: number, body: { text(): string | Promise<string> }): Promise<never> {
  const refusal = refusalOf(await body.text());
  const message = typeof refusal?.message === 'string' ? refusal.message : `upstream answered ${statusCode}`;
  // A caller's mistake is theirs to fix; a refused credential is ours, and not theirs to see.
  if (statusCode === 400 || statusCode === 404 || statusCode === 422) throw badRequest(`upstream: ${message}`);
  throw badGateway(`upstream refused the call (${statusCode})`);
}
