import OpenAI from 'openai';
import { request } from 'undici';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { textTokens } from '../src/lib/tokens/tokens.ts';
import { adminHeaders, backendName } from './harness.ts';
import { MESSAGES, OPENAI, sseData, useTextChannels } from './support/text-channels.ts';

// previous_response_id on an `openai` channel: its upstream keeps the conversation (and what the
// gateway never sees of it: encrypted reasoning, its prompt cache), so a follow-up goes back to the
// channel that answered, as the caller wrote it (its bytes; only the model mapped). When that
// channel can no longer take the call, or fails before answering, the conversation the gateway kept
// goes to the next channel instead (here a `messages` one at a lower priority, or another `openai`).

const s = useTextChannels();
let base: string;
let openaiChannel: string;

beforeAll(async () => {
  await s.t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(s.t.app.server.address() as { port: number }).port}`;
  const channels = (await s.t.app.inject({ method: 'GET', url: '/admin/channels', headers: adminHeaders })).json().data;
  openaiChannel = channels.find((c: any) => c.type === 'openai').id;
  const fallback = await s.t.app.inject({
    method: 'POST',
    url: '/admin/channels',
    headers: adminHeaders,
    payload: { name: 'fallback', type: 'messages', base_url: s.fakes.messages.url, secret: s.fakes.messages.key, models: [OPENAI], model_mapping: { [OPENAI]: MESSAGES }, priority: 0 },
  });
  expect(fallback.statusCode, fallback.body).toBe(201);
});

afterEach(() => {
  vi.restoreAllMocks();
  s.fakes.openai.mode = 'ok';
});

const post = async (body: string) => {
  const res = await request(`${base}/v1/responses`, { method: 'POST', headers: { ...s.auth, 'content-type': 'application/json' }, body });
  const text = await res.body.text();
  expect(res.statusCode, text).toBe(200);
  return text;
};
const create = async (payload: object) => JSON.parse(await post(JSON.stringify(payload)));
const read = async (id: string) => {
  const res = await s.t.app.inject({ method: 'GET', url: `/v1/responses/${id}`, headers: s.auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const patchChannel = async (id: string, payload: object) => {
  const res = await s.t.app.inject({ method: 'PATCH', url: `/admin/channels/${id}`, headers: adminHeaders, payload });
  expect(res.statusCode, res.body).toBe(200);
};
const client = () => new OpenAI({ apiKey: s.auth.authorization!.slice('Bearer '.length), baseURL: `${base}/v1`, maxRetries: 0 });
const lastOpenAI = () => s.fakes.openai.requests.at(-1)!;
const lastMessages = () => s.fakes.messages.requests.at(-1)!;
/** The texts of a messages body's turns, in order. */
const turnsOf = (body: any): string[] => body.messages.map((m: any) => (typeof m.content === 'string' ? m.content : m.content.map((b: any) => b.text ?? '').join('')));

describe(`responses: a follow-up on an openai channel goes back to it [${backendName}]`, () => {
  it('whole: the upstream gets the very bytes the caller sent, previous_response_id in them; the answer is stored and read back', async () => {
    const first = await create({ model: OPENAI, input: 'hello' });
    // Spaced and ordered as a caller may write it: a re-encoded body would not match.
    const sent = `{ "previous_response_id": "${first.id}", "model": "${OPENAI}",  "input": "more" }`;
    const answer = JSON.parse(await post(sent));
    expect(lastOpenAI()).toMatchObject({ path: '/v1/responses', raw: sent });
    expect(answer).toMatchObject({ previous_response_id: first.id, model: OPENAI, output: [{ content: [{ text: 'echo: more' }] }] });
    expect(answer.id).toMatch(/^resp_fake/);
    expect(await read(answer.id)).toMatchObject({ id: answer.id, previous_response_id: first.id });
  });

  it('through the openai SDK, whole and streamed: only the model is mapped; the channel is recorded per stored answer', async () => {
    await patchChannel(openaiChannel, { model_mapping: { [OPENAI]: 'gpt-upstream-name' } });
    s.fakes.openai.models.push('gpt-upstream-name');
    try {
      const sdk = client();
      const first = await sdk.responses.create({ model: OPENAI, input: 'hello' });
      const second = await sdk.responses.create({ model: OPENAI, previous_response_id: first.id, input: 'more' });
      expect(lastOpenAI().body).toEqual({ model: 'gpt-upstream-name', previous_response_id: first.id, input: 'more' });
      expect(second).toMatchObject({ previous_response_id: first.id, model: OPENAI, output_text: 'echo: more' });
      const stream = await sdk.responses.create({ model: OPENAI, previous_response_id: second.id, input: [{ role: 'user', content: 'again' }], stream: true });
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      expect(lastOpenAI().body).toEqual({ model: 'gpt-upstream-name', previous_response_id: second.id, input: [{ role: 'user', content: 'again' }], stream: true });
      const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
      expect(done.type).toBe('response.completed');
      // The forwarded events name the model as the caller did, as the whole answers do, and so does the stored answer.
      const named = events.flatMap((event) => ('response' in event ? [event.response.model] : []));
      expect(named.length).toBeGreaterThanOrEqual(2);
      expect(new Set(named)).toEqual(new Set([OPENAI]));
      expect(done.response).toMatchObject({ previous_response_id: second.id, output: [{ content: [{ text: 'echo: again' }] }] });
      expect(await sdk.responses.retrieve(done.response.id)).toMatchObject({ id: done.response.id, previous_response_id: second.id, model: OPENAI });
      const rows = await s.t.ctx.db.selectFrom('responses').select(['id', 'channel_id']).where('id', 'in', [first.id, second.id, done.response.id]).execute();
      expect(rows.map((r) => r.channel_id)).toEqual([openaiChannel, openaiChannel, openaiChannel]);
    } finally {
      await patchChannel(openaiChannel, { model_mapping: {} });
    }
  });

  it('the hold counts the conversation the upstream keeps: it bills it as input', async () => {
    const long = 'the stored turn says this again and again '.repeat(300);
    const first = await create({ model: OPENAI, input: long, max_output_tokens: 16 });
    const hold = vi.spyOn(s.t.ctx.textMoney, 'hold');
    await create({ model: OPENAI, previous_response_id: first.id, input: 'more', max_output_tokens: 16 });
    expect(lastOpenAI().body).toEqual({ model: OPENAI, previous_response_id: first.id, input: 'more', max_output_tokens: 16 });
    await create({ model: OPENAI, input: 'more', max_output_tokens: 16 });
    const [followUp, alone] = hold.mock.calls.map(([call]) => call.amount);
    const pricing = s.t.ctx.groups.forGroup(undefined);
    expect(followUp! - alone!).toBeGreaterThanOrEqual(pricing.tokenUnits(OPENAI, textTokens(long), 0) - pricing.tokenUnits(OPENAI, 0, 0));
  });
});

describe(`responses: when the channel that answered cannot take the follow-up [${backendName}]`, () => {
  const cases: { name: string; cut(): Promise<void> | void; restore(): Promise<void> | void; asked: boolean }[] = [
    { name: 'it is disabled', cut: () => patchChannel(openaiChannel, { status: 'disabled' }), restore: () => patchChannel(openaiChannel, { status: 'enabled' }), asked: false },
    { name: 'it no longer lists the model', cut: () => patchChannel(openaiChannel, { models: ['chatgen-4-haiku'] }), restore: () => patchChannel(openaiChannel, { models: [OPENAI] }), asked: false },
    { name: 'its upstream answers 503', cut: () => void (s.fakes.openai.mode = 'down'), restore: () => void (s.fakes.openai.mode = 'ok'), asked: true },
  ];
  for (const { name, cut, restore, asked } of cases) {
    it(`${name}: the stored conversation goes to the next channel, whole and streamed`, async () => {
      const first = await create({ model: OPENAI, input: 'hello' });
      const kept = await create({ model: OPENAI, previous_response_id: first.id, input: 'more' });
      expect(lastOpenAI().body).toEqual({ model: OPENAI, previous_response_id: first.id, input: 'more' });
      await cut();
      try {
        const upstreamCalls = s.fakes.openai.requests.length;
        const whole = await create({ model: OPENAI, previous_response_id: kept.id, input: 'and then' });
        // The answer the upstream kept is in the gateway's store with all its turns.
        expect(turnsOf(lastMessages().body)).toEqual(['hello', 'echo: hello', 'more', 'echo: more', 'and then']);
        expect(JSON.stringify(lastMessages().body)).not.toContain('previous_response_id');
        expect(whole).toMatchObject({ previous_response_id: kept.id, output: [{ content: [{ text: 'echo: and then' }] }] });
        // The sticky channel was tried once (its 503 is not a forgotten response: its own place,
        // with the whole conversation, would fail the same way) or passed over.
        const tried = s.fakes.openai.requests.slice(upstreamCalls);
        expect(tried.map((r) => r.body.previous_response_id)).toEqual(asked ? [kept.id] : []);

        const beforeStream = s.fakes.openai.requests.length;
        const streamed = await post(JSON.stringify({ model: OPENAI, previous_response_id: kept.id, input: 'at last', stream: true }));
        expect(s.fakes.openai.requests.slice(beforeStream).map((r) => r.body.previous_response_id)).toEqual(asked ? [kept.id] : []);
        expect(turnsOf(lastMessages().body)).toEqual(['hello', 'echo: hello', 'more', 'echo: more', 'at last']);
        const completed = sseData(streamed).find((e) => e.type === 'response.completed');
        expect(completed.response).toMatchObject({ previous_response_id: kept.id, output: [{ content: [{ text: 'echo: at last' }] }] });
        expect((await read(whole.id)).previous_response_id).toBe(kept.id);
        // The fallback's answer is the gateway's alone: its follow-up goes to the openai channel as the whole conversation.
        await restore();
        const after = await create({ model: OPENAI, previous_response_id: whole.id, input: 'next' });
        expect(lastOpenAI().body.previous_response_id).toBeUndefined();
        expect(JSON.stringify(lastOpenAI().body.input)).toContain('echo: and then');
        expect(after).toMatchObject({ previous_response_id: whole.id, output: [{ content: [{ text: 'echo: next' }] }] });
      } finally {
        await restore();
      }
    });
  }

  it('its upstream no longer keeps the response: the same channel is sent the stored conversation, whole and streamed', async () => {
    const first = await create({ model: OPENAI, input: 'hello' });
    const kept = await create({ model: OPENAI, previous_response_id: first.id, input: 'more' });
    // Expired upstream (or the channel's key moved to another organisation): it answers previous_response_not_found.
    s.fakes.openai.responses.clear();
    for (const stream of [false, true]) {
      const upstreamCalls = s.fakes.openai.requests.length;
      const messagesCalls = s.fakes.messages.requests.length;
      const input = stream ? 'streamed on' : 'and then';
      const text = await post(JSON.stringify({ model: OPENAI, previous_response_id: kept.id, input, stream }));
      const answer = stream ? sseData(text).find((e) => e.type === 'response.completed').response : JSON.parse(text);
      expect(answer).toMatchObject({ previous_response_id: kept.id, output: [{ content: [{ text: `echo: ${input}` }] }] });
      const tried = s.fakes.openai.requests.slice(upstreamCalls);
      expect(tried.map((r) => r.body.previous_response_id)).toEqual([kept.id, undefined]);
      expect(JSON.stringify(tried[1]!.body.input)).toContain('echo: more');
      expect(s.fakes.messages.requests.length).toBe(messagesCalls);
    }
  });

  it('it was deleted: another openai channel gets the stored conversation, not the id it never issued', async () => {
    const made = await s.t.app.inject({ method: 'POST', url: '/admin/channels', headers: adminHeaders, payload: { name: 'openai-first', type: 'openai', base_url: s.fakes.openai.url, secret: s.fakes.openai.key, models: [OPENAI], priority: 20 } });
    expect(made.statusCode, made.body).toBe(201);
    const first = await create({ model: OPENAI, input: 'hello' });
    const row = await s.t.ctx.db.selectFrom('responses').select('channel_id').where('id', '=', first.id).executeTakeFirstOrThrow();
    expect(row.channel_id).toBe(made.json().id);
    expect((await s.t.app.inject({ method: 'DELETE', url: `/admin/channels/${made.json().id}`, headers: adminHeaders })).statusCode).toBe(200);
    const next = await create({ model: OPENAI, previous_response_id: first.id, input: 'more' });
    const sent = lastOpenAI().body;
    expect(sent.previous_response_id).toBeUndefined();
    expect(JSON.stringify(sent.input)).toContain('echo: hello');
    expect(next).toMatchObject({ previous_response_id: first.id, output: [{ content: [{ text: 'echo: more' }] }] });
    // Answered from the gateway's store: no channel keeps it upstream.
    expect((await s.t.ctx.db.selectFrom('responses').select('channel_id').where('id', '=', next.id).executeTakeFirstOrThrow()).channel_id).toBeNull();
  });

  it('an answer stored with store: false upstream is not continued there: nothing was kept', async () => {
    const first = await create({ model: OPENAI, input: 'hello', store: false });
    const res = await s.t.app.inject({ method: 'POST', url: '/v1/responses', headers: s.auth, payload: { model: OPENAI, previous_response_id: first.id, input: 'more' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain(first.id);
  });
});
