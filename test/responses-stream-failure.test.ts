import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, seedAccount } from './harness.ts';
import { MODEL, failingMidStream, rawStream, sdkStream, startRig, type Rig } from './support/translated-streams.ts';

// A Responses stream the upstream breaks off after the caller got events (its error event, or its
// connection cut), on a route that translates (a messages channel) and on one that forwards (an
// openai channel's own /v1/responses): the gateway's closing events go on with the numbers the
// caller already got, and end with response.failed naming the response the caller was told of in
// response.created, which is how the openai SDK, Codex and the AI SDK learn a response failed.

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
});
afterAll(async () => rig?.close());

const eventsOf = (text: string) =>
  text
    .split('\n\n')
    .filter((e) => e.includes('data: '))
    .map((e) => ({ name: /^event: (.*)$/m.exec(e)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(e)![1]!) }));

const ROUTES = { translated: 'messages', forwarded: 'responses' } as const;
const ENDS = {
  'its error event': (pieces: string[]) => ({ pieces, end: 'whole' as const }),
  'its connection cut': (pieces: string[]) => ({ pieces: pieces.slice(0, -1), end: 'cut' as const }),
};

describe(`a Responses stream broken off midway [${backendName}]`, () => {
  for (const [route, up] of Object.entries(ROUTES))
    for (const [ending, script] of Object.entries(ENDS))
      it(`${route} (${up} upstream), ${ending}: numbered on, then error and response.failed`, async () => {
        rig.upstream.script = script(failingMidStream(up));
        const account = await seedAccount(rig.t.ctx, 1);
        const raw = await rawStream('responses', rig.base, account.key, MODEL[up]);
        expect(raw.status).toBe(200);
        const events = eventsOf(raw.text);
        // Numbered from 0, one by one: no event restarts the count.
        expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
        expect(events.every((e) => e.name === e.data.type)).toBe(true);
        const created = events[0]!.data.response;
        expect(events[0]!.name).toBe('response.created');
        expect(raw.text).toContain('one two three four five six seven eight');
        const [error, failed] = events.slice(-2);
        expect(error!.data).toEqual({ type: 'error', code: 'bad_gateway', message: 'The stream was interrupted', param: null, sequence_number: events.length - 2 });
        expect(failed!.name).toBe('response.failed');
        expect(failed!.data.response).toMatchObject({ id: created.id, object: 'response', created_at: created.created_at, model: created.model, status: 'failed', error: { code: 'server_error', message: 'The stream was interrupted' } });
        expect(Array.isArray(failed!.data.response.output)).toBe(true);
        expect(raw.text).not.toContain('shard overloaded');
      });

  // The SDK's stream helper treats an `error` event as the stream's error: finalResponse() rejects
  // with it and the helper stops there (response.failed after it is for clients that read only that).
  it("the openai SDK's responses.stream() rejects with the error event, numbered on", async () => {
    for (const up of Object.values(ROUTES)) {
      rig.upstream.script = { pieces: failingMidStream(up), end: 'whole' };
      const { result, error, events } = await sdkStream('responses', rig.base, (await seedAccount(rig.t.ctx, 1)).key, MODEL[up]);
      expect(result, up).toBeUndefined();
      expect(error, up).toEqual({ type: 'error', code: 'bad_gateway', message: 'The stream was interrupted', param: null, sequence_number: events.length - 1 });
      expect(events.map((e) => e.sequence_number), up).toEqual(events.map((_, i) => i));
    }
  });

  it('responses.create({stream: true}) iterated: the same events, then the end of the iteration', async () => {
    for (const up of Object.values(ROUTES)) {
      rig.upstream.script = { pieces: failingMidStream(up).slice(0, -1), end: 'cut' };
      const sdk = new OpenAI({ apiKey: (await seedAccount(rig.t.ctx, 1)).key, baseURL: `${rig.base}/v1`, maxRetries: 0 });
      const seen: any[] = [];
      for await (const event of await sdk.responses.create({ model: MODEL[up], input: 'talk', stream: true })) seen.push(event);
      expect(seen.map((e) => e.sequence_number), up).toEqual(seen.map((_, i) => i));
      expect(seen.at(-1), up).toMatchObject({ type: 'response.failed', response: { id: seen[0].response.id, status: 'failed' } });
    }
  });
});
