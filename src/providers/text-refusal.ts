import { badGateway, badRequest } from '../core/errors.ts';

// A text upstream's refusal (4xx) as the caller's error. Every text vendor puts its message at
// error.message, so one reading serves them all.

export async function clientError(statusCode: number, body: { text(): string | Promise<string> }): Promise<never> {
  let message = `upstream answered ${statusCode}`;
  try {
    const parsed: { error?: { message?: unknown } } | null = JSON.parse(await body.text());
    if (typeof parsed?.error?.message === 'string') message = parsed.error.message;
  } catch {
    // not JSON: keep the status
  }
  // A caller's mistake is theirs to fix; a refused credential is ours, and not theirs to see.
  if (statusCode === 400 || statusCode === 404 || statusCode === 422) throw badRequest(`upstream: ${message}`);
  throw badGateway(`upstream refused the call (${statusCode})`);
}
