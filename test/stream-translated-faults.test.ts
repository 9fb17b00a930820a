import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, backendName, seedAccount } from './harness.ts';
import { FORMATS, MODEL, SECRET, failingMidStream, rawStream, sdkStream, startRig, type Format, type Rig } from './support/translated-streams.ts';

// Streams whose upstream fails midway (its error event after some text), on every pair of caller
// format and channel protocol, translated or the same: the caller's SDK gets an error of its own
// format that names neither the channel's secret nor the upstream's message; the call is logged as
// failed (the message without the secret) and billed as cut, for the prompt the upstream reported
// (or our count of it) and the text it produced.

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
});
afterAll(async () => rig?.close());

async function usageRows(userId: string) {
  const read = () => rig.t.ctx.db.selectFrom('usage').selectAll().where('user_id', '=', userId).execute();
  for (let i = 0; i < 100 && (await read()).length === 0; i++) await new Promise((r) => setTimeout(r, 30));
  return read();
}
async function callRows(userId: string) {
  const read = async () => (await rig.t.app.inject({ method: 'GET', url: `/admin/calls?user_id=${userId}`, headers: adminHeaders })).json().data as any[];
  for (let i = 0; i < 100 && (await read()).length === 0; i++) await new Promise((r) => setTimeout(r, 30));
  return read();
}

/** What each upstream's script reported of the prompt before failing (undefined: nothing, our count bills it). */
const REPORTED: Record<Format, { input: number; cache_read: number; cache_write: number } | undefined> = {
  messages: { input: 31, cache_read: 7, cache_write: 3 },
  chat: undefined,
  responses: { input: 30, cache_read: 11, cache_write: 0 },
  gemini: { input: 25, cache_read: 4, cache_write: 0 },
};

/** How each caller's SDK tells the failure. */
const SURFACED: Record<Format, (r: { result?: any; error?: any; events: any[] }) => void> = {
  messages: (r) => expect(r.error?.constructor?.name).toBe('APIError'),
  chat: (r) => expect(r.error?.constructor?.name).toBe('APIError'),
  // The Responses API's own error event: the SDK hands it on as an event of type `error`.
  responses: (r) => expect(r.events.at(-1)).toMatchObject({ type: 'error', code: 'bad_gateway' }),
  gemini: (r) => expect(r.error?.name).toBe('ApiError'),
};

describe(`an upstream error mid-stream [${backendName}]`, () => {
  // An openai channel takes only Responses calls on its /v1/responses (the others go to its chat completions).
  for (const up of FORMATS)
    for (const caller of FORMATS.filter((c) => up !== 'responses' || c === 'responses'))
      it(`${caller} caller, ${up} upstream${caller === up ? ' (same format)' : ''}`, async () => {
        rig.upstream.script = { pieces: failingMidStream(up), end: 'whole' };
        const account = await seedAccount(rig.t.ctx, 1);
        const raw = await rawStream(caller, rig.base, account.key, MODEL[up]);
        expect(raw.status).toBe(200);
        expect(raw.text).toContain('one two three four five six seven eight');
        expect(raw.text).not.toContain(SECRET);
        expect(raw.text).not.toContain('shard overloaded');
        const [row] = await usageRows(account.user.id);
        const [call] = await callRows(account.user.id);
        expect(call).toMatchObject({ status: 'failed', error: { code: 'bad_gateway', message: 'upstream stream failed: shard overloaded for key [redacted]' } });
        expect(JSON.stringify(call)).not.toContain(SECRET);
        expect(row).toMatchObject({ status: 'aborted', ...(REPORTED[up] ? { input_tokens: REPORTED[up].input, cache_read_tokens: REPORTED[up].cache_read, cache_write_tokens: REPORTED[up].cache_write } : {}) });
        expect(row!.input_tokens).toBeGreaterThan(0);
        // Eight words were produced: billed at least those (the upstream's own count where it gave one).
        expect(row!.output_tokens).toBeGreaterThanOrEqual(8);
        expect(row!.output_tokens).toBeLessThan(20);
        SURFACED[caller](await sdkStream(caller, rig.base, (await seedAccount(rig.t.ctx, 1)).key, MODEL[up]));
      });
});
