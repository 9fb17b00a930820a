import { randomBytes } from 'node:crypto';

// A caller's x-request-id is kept only in a safe alphabet and starting with a letter or digit: it is
// written to logs and to the usage export, where a leading `-`, `+`, `=` or `@` would be a formula.
const REQUEST_ID = /^[A-Za-z0-9][\w.:-]{0,127}$/;
// The form of the ids made below. A caller's id of this form is replaced: the next ones can be read
// off any answer, and a call log row is kept per id, so a caller sending them first would take the
// ids (and the call log rows) of other accounts' calls.
const GENERATED_FORM = /^[0-9a-f]{12}-[0-9a-z]+$/;

// Unique across processes (a random prefix per process) and cheaper than a UUID per request; hex,
// so a generated id starts with a letter or digit too.
const REQUEST_ID_PREFIX = randomBytes(6).toString('hex');
let requestCounter = 0;

export const nextRequestId = (): string => `${REQUEST_ID_PREFIX}-${(++requestCounter).toString(36)}`;

/** The request's id: the caller's x-request-id when it is safe and not of our own form, else a new one. */
export function requestIdOf(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) && !GENERATED_FORM.test(incoming) ? incoming : nextRequestId();
}

/** True for an id this gateway made: unique, so no other call has it. A caller's may repeat. */
export const isGeneratedRequestId = (id: string): boolean => GENERATED_FORM.test(id);
