import { describe, expect, it } from 'vitest';
import { FORMATS } from '../src/formats/index.ts';
import { DEFAULT_MAX_OUTPUT } from '../src/modules/text/native.mapping.ts';
import { backendName, seedAccount } from './harness.ts';
import { MESSAGES, OPENAI, SIMULATED, useTextChannels } from './support/text-channels.ts';

// POST /v1/responses takes null for every field the OpenAI API types `| null` (openai@6.49
// ResponseCreateParamsBase), meaning not set, as POST /v1/chat/completions does (chat-nulls.test.ts).

const NULLS = {
  background: null, context_management: null, conversation: null, include: null, instructions: null, max_output_tokens: null, metadata: null,
  moderation: null, parallel_tool_calls: null, previous_response_id: null, prompt: null, prompt_cache_key: null, prompt_cache_retention: null,
  reasoning: null, safety_identifier: null, service_tier: null, store: null, stream: null, stream_options: null, temperature: null,
  top_logprobs: null, top_p: null, truncation: null,
};

const s = useTextChannels();

const body = (model: string, extra: object = {}) => ({ model, input: 'hi', ...extra });
const create = (payload: object, headers = s.auth) => s.t.app.inject({ method: 'POST', url: '/v1/responses', headers, payload });

describe(`responses: null is not set [${backendName}]`, () => {
  it('every nullable field null: 200 on each channel kind, decoded as if left out; null store still stores', async () => {
    for (const model of [SIMULATED, OPENAI, MESSAGES]) {
      const res = await create(body(model, NULLS));
      expect(res.statusCode, `${model}: ${res.body}`).toBe(200);
      expect(res.json()).toMatchObject({ object: 'response', status: 'completed', previous_response_id: null });
      const read = await s.t.app.inject({ method: 'GET', url: `/v1/responses/${res.json().id}`, headers: s.auth });
      expect(read.statusCode, read.body).toBe(200);
    }
    expect(FORMATS.responses.decodeRequest(body(SIMULATED, NULLS))).toEqual(FORMATS.responses.decodeRequest(body(SIMULATED)));
  });

  it('the hold: a null max_output_tokens is held as none', async () => {
    const broke = (await seedAccount(s.t.ctx, 0)).auth;
    const refusal = async (extra: object) => {
      const res = await create(body(SIMULATED, extra), broke);
      expect(res.statusCode, res.body).toBe(402);
      return res.json().error.message as string;
    };
    const absent = await refusal({});
    expect(absent).toContain(`plus ${DEFAULT_MAX_OUTPUT} output tokens`);
    expect(await refusal({ max_output_tokens: null })).toBe(absent);
  });

  it('a translated upstream gets the body of the call without the nulls, whole and streamed', async () => {
    for (const stream of [{}, { stream: true }]) {
      const left = await create(body(MESSAGES, stream));
      expect(left.statusCode, left.body).toBe(200);
      const without = s.fakes.messages.requests.at(-1)!.body;
      const nulled = await create(body(MESSAGES, { ...NULLS, ...stream }));
      expect(nulled.statusCode, nulled.body).toBe(200);
      expect(s.fakes.messages.requests.at(-1)!.body).toEqual(without);
    }
  });

  it('any other value is checked as before', async () => {
    for (const bad of [{ max_output_tokens: 0 }, { max_output_tokens: 'x' }, { store: 'yes' }, { instructions: 5 }, { previous_response_id: 5 }]) {
      const res = await create(body(SIMULATED, bad));
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().error.message).toMatch(new RegExp(`^${Object.keys(bad)[0]} must be`));
    }
  });
});
