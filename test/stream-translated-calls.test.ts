import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName, seedAccount } from './harness.ts';
import { MODEL, interleavedCalls, rawStream, sdkStream, startRig, type Format, type Rig } from './support/translated-streams.ts';

// A chat upstream that streams parallel tool calls with their argument pieces interleaved (some
// compatible upstreams do), translated for each other format: the caller's SDK assembles the same
// calls; an upstream stopped for max tokens mid-arguments is a max-tokens stop in every format; the
// usage by class reaches the caller's final usage and the usage table.

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
});
afterAll(async () => rig?.close());

async function usageRow(userId: string) {
  const read = () => rig.t.ctx.db.selectFrom('usage').selectAll().where('user_id', '=', userId).execute();
  for (let i = 0; i < 100 && (await read()).length === 0; i++) await new Promise((r) => setTimeout(r, 30));
  return (await read())[0]!;
}

const TOOLS: Record<Exclude<Format, 'chat'>, Record<string, unknown>> = {
  messages: { tools: ['get_weather', 'get_time'].map((name) => ({ name, input_schema: { type: 'object' } })) },
  responses: { tools: ['get_weather', 'get_time'].map((name) => ({ type: 'function', name, parameters: { type: 'object' } })) },
  gemini: { config: { tools: [{ functionDeclarations: ['get_weather', 'get_time'].map((name) => ({ name, parameters: { type: 'object' } })) }] } },
};

/** The calls each SDK assembled, as [id, name, arguments]; its stop; its usage. */
function read(format: Exclude<Format, 'chat'>, r: { result?: any; error?: any }) {
  expect(r.error).toBeUndefined();
  if (format === 'messages')
    return { calls: r.result.content.filter((b: any) => b.type === 'tool_use').map((b: any) => [b.id, b.name, b.input]), stop: r.result.stop_reason, usage: r.result.usage };
  if (format === 'responses')
    return { calls: r.result.output.filter((i: any) => i.type === 'function_call').map((i: any) => [i.call_id, i.name, JSON.parse(i.arguments)]), stop: r.result.status, usage: r.result.usage };
  const chunks = r.result as any[];
  const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
  return { calls: parts.filter((p) => p.functionCall).map((p) => [p.functionCall.id, p.functionCall.name, p.functionCall.args]), stop: chunks.at(-1).candidates[0].finishReason, usage: chunks.at(-1).usageMetadata };
}

describe(`parallel calls from a chat upstream, interleaved [${backendName}]`, () => {
  it('messages caller: no piece of a call after its content_block_stop (clients parse the input there)', async () => {
    rig.upstream.script = { pieces: interleavedCalls('tool_calls'), end: 'whole' };
    const account = await seedAccount(rig.t.ctx, 1);
    const raw = await rawStream('messages', rig.base, account.key, MODEL.chat, TOOLS.messages);
    const events = raw.text.split('\n\n').filter(Boolean).map((e) => JSON.parse(/^data: (.*)$/m.exec(e)![1]!));
    const open = new Set<number>();
    for (const e of events) {
      if (e.type === 'content_block_start') open.add(e.index);
      if (e.type === 'content_block_delta') expect(open.has(e.index), JSON.stringify(e)).toBe(true);
      if (e.type === 'content_block_stop') open.delete(e.index);
      // One block at a time, as the vendor's streams.
      expect(open.size).toBeLessThanOrEqual(1);
    }
  });

  for (const caller of ['messages', 'responses', 'gemini'] as const) {
    it(`${caller} caller: the same two calls, a tool-use stop, usage by class`, async () => {
      rig.upstream.script = { pieces: interleavedCalls('tool_calls'), end: 'whole' };
      const account = await seedAccount(rig.t.ctx, 1);
      const got = read(caller, await sdkStream(caller, rig.base, account.key, MODEL.chat, TOOLS[caller]));
      expect(got.calls).toEqual([
        ['call_a', 'get_weather', { city: 'Paris' }],
        ['call_b', 'get_time', { tz: 'UTC' }],
      ]);
      expect(got.stop).toBe({ messages: 'tool_use', responses: 'completed', gemini: 'STOP' }[caller]);
      expect(got.usage).toMatchObject({
        messages: { input_tokens: 30, cache_read_input_tokens: 20, output_tokens: 30 },
        responses: { input_tokens: 50, input_tokens_details: { cached_tokens: 20 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 12 } },
        gemini: { promptTokenCount: 50, cachedContentTokenCount: 20, candidatesTokenCount: 18, thoughtsTokenCount: 12 },
      }[caller]);
      expect(await usageRow(account.user.id)).toMatchObject({ status: 'ok', input_tokens: 30, cache_read_tokens: 20, cache_write_tokens: 0, output_tokens: 30, reasoning_tokens: 12 });
    });

    it(`${caller} caller: stopped for max tokens mid-arguments, a max-tokens stop`, async () => {
      rig.upstream.script = { pieces: interleavedCalls('length'), end: 'whole' };
      const account = await seedAccount(rig.t.ctx, 1);
      const r = await sdkStream(caller, rig.base, account.key, MODEL.chat, TOOLS[caller]);
      expect(r.error).toBeUndefined();
      const stop = caller === 'messages' ? r.result.stop_reason : caller === 'responses' ? [r.result.status, r.result.incomplete_details?.reason] : r.result.at(-1).candidates[0].finishReason;
      expect(stop).toEqual({ messages: 'max_tokens', responses: ['incomplete', 'max_output_tokens'], gemini: 'MAX_TOKENS' }[caller]);
      // Both calls' arguments were cut off: a Responses item says so, and Gemini (whose calls are
      // whole parts, never half of one) leaves them out rather than send arguments nobody can run.
      if (caller === 'responses') expect(r.result.output.filter((i: any) => i.type === 'function_call').map((i: any) => i.status)).toEqual(['incomplete', 'incomplete']);
      if (caller === 'gemini') expect(r.result.flatMap((c: any) => c.candidates?.[0]?.content?.parts ?? []).filter((p: any) => p.functionCall)).toEqual([]);
      expect(await usageRow(account.user.id)).toMatchObject({ status: 'ok', input_tokens: 30, output_tokens: 30 });
    });
  }
});
