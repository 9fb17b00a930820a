import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORMATS } from '../src/formats/index.ts';
import { storeResponse } from '../src/modules/responses/responses.repo.ts';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// POST /v1/responses with `store` (the default): the answer can be read back and continued with
// previous_response_id on any channel (here the simulator, which holds no state); per account.

let t: TestApp;
let base: string;
const MODEL = 'chatgen-4-haiku';
const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(async () => t?.close());

const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });

describe(`stored responses [${backendName}]`, () => {
  it('a follow-up by previous_response_id carries the conversation: the tool output answers the stored call', async () => {
    const { key } = await seedAccount(t.ctx, 10);
    const first = await client(key).responses.create({ model: MODEL, instructions: 'Be brief.', input: 'Weather? [sim:tool=get_weather {"city":"Lyon"}]', tools });
    const call = first.output.find((item) => item.type === 'function_call')!;
    expect(call).toMatchObject({ name: 'get_weather' });
    // Only the tool's output is sent: the call it answers is in the stored conversation.
    const second = await client(key).responses.create({ model: MODEL, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'rain, 9 C' }], tools });
    expect(second.output_text).toContain('rain, 9 C');
    // The follow-up was billed for the whole conversation it sent.
    expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
    // Streamed answers are stored too, and continue the same way.
    const stream = client(key).responses.stream({ model: MODEL, previous_response_id: second.id, input: 'And tomorrow?' });
    const third = await stream.finalResponse();
    expect((await client(key).responses.retrieve(third.id)).id).toBe(third.id);
  });

  it('item references (how the AI SDK sends a stored answer back) become the stored items; another account\'s are a 400', async () => {
    const [a, b] = [await seedAccount(t.ctx, 10), await seedAccount(t.ctx, 10)];
    const prompt = { role: 'user' as const, content: 'Weather? [sim:tool=get_weather {"city":"Lyon"}]' };
    const first = await client(a.key).responses.create({ model: MODEL, input: [prompt], tools });
    const call = first.output.find((item) => item.type === 'function_call')!;
    const input = [prompt, ...first.output.map((item) => ({ type: 'item_reference' as const, id: item.id! })), { type: 'function_call_output' as const, call_id: call.call_id, output: 'rain, 9 C' }];
    const second = await client(a.key).responses.create({ model: MODEL, input, tools });
    expect(second.output_text).toContain('rain, 9 C');
    const refused = await client(b.key).responses.create({ model: MODEL, input, tools }).catch((err) => err);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.message).toContain('item_reference');
  });

  it('GET returns the stored Response; another account, store:false and an unknown id are not found', async () => {
    const [a, b] = [await seedAccount(t.ctx, 10), await seedAccount(t.ctx, 10)];
    const made = await client(a.key).responses.create({ model: MODEL, input: 'hello' });
    const read = await client(a.key).responses.retrieve(made.id);
    expect(read).toMatchObject({ id: made.id, object: 'response', status: 'completed', output_text: made.output_text });
    await expect(client(b.key).responses.retrieve(made.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const unstored = await client(a.key).responses.create({ model: MODEL, input: 'hello', store: false });
    await expect(client(a.key).responses.retrieve(unstored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    // As the vendor answers: a 400 naming the id, nothing charged.
    const before = (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: { authorization: `Bearer ${b.key}` } })).json().used_balance;
    const refused = await client(b.key).responses.create({ model: MODEL, previous_response_id: made.id, input: 'more' }).catch((err) => err);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.message).toContain(made.id);
    const after = (await t.app.inject({ method: 'GET', url: '/v1/user/balance', headers: { authorization: `Bearer ${b.key}` } })).json().used_balance;
    expect(after).toBe(before);
  });

  it("keeps the turns apart from the answer (its text is stored once); a row that holds both, as rows once did, continues the same", async () => {
    const { key } = await seedAccount(t.ctx, 10);
    const first = await client(key).responses.create({ model: MODEL, input: 'Weather? [sim:tool=get_weather {"city":"Lyon"}]', tools });
    const call = first.output.find((item) => item.type === 'function_call')!;
    const row = await t.ctx.db.selectFrom('responses').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
    expect(row.conversation).not.toContain(call.call_id);
    const follow = () => client(key).responses.create({ model: MODEL, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'rain, 9 C' }], tools });
    const now = await follow();
    const answer = FORMATS.responses.decodeAnswer(JSON.parse(row.response));
    const both = [...(JSON.parse(row.conversation) as { turns: unknown[] }).turns, { role: 'assistant', content: answer.content }];
    await t.ctx.db.updateTable('responses').set({ conversation: JSON.stringify(both) }).where('id', '=', first.id).execute();
    const before = await follow();
    expect(before.output_text).toBe(now.output_text);
    expect(before.usage!.input_tokens).toBe(now.usage!.input_tokens);
    expect(now.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
  });

  it('an id stored again (an upstream that reuses its ids) keeps the newer answer, under its account', async () => {
    const [a, b] = [await seedAccount(t.ctx, 10), await seedAccount(t.ctx, 10)];
    const now = Date.now();
    const row = (userId: string, text: string) => ({ id: 'resp_reused', user_id: userId, response: JSON.stringify({ id: 'resp_reused', object: 'response', output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }] }), conversation: '{"turns":[]}', created_at: now, expires_at: now + 60_000 });
    await storeResponse(t.ctx.db, row(a.user.id, 'older'));
    await storeResponse(t.ctx.db, row(b.user.id, 'newer'));
    expect(await client(b.key).responses.retrieve('resp_reused')).toMatchObject({ output_text: 'newer' });
    await expect(client(a.key).responses.retrieve('resp_reused')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('expired answers are deleted as new ones are stored, and never read', async () => {
    const { key, user } = await seedAccount(t.ctx, 10);
    const past = Date.now() - 1000;
    const expired = Array.from({ length: 20 }, (_, i) => ({ id: `resp_expired_${i}`, user_id: user.id, response: '{}', conversation: '[]', created_at: past - 1000, expires_at: past }));
    await t.ctx.db.insertInto('responses').values(expired).execute();
    await expect(client(key).responses.retrieve('resp_expired_0')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    for (let i = 0; i < 16; i++) await client(key).responses.create({ model: MODEL, input: `store ${i}` });
    const left = await t.ctx.db.selectFrom('responses').select('id').where('id', 'like', 'resp_expired_%').execute();
    expect(left).toEqual([]);
  });
});

