import { describe, expect, it } from 'vitest';
import { FORMATS } from '../src/formats/index.ts';
import { DEFAULT_MAX_OUTPUT } from '../src/modules/text/native.mapping.ts';
import { backendName, seedAccount } from './harness.ts';
import { MESSAGES, OPENAI, SIMULATED, sseData, useTextChannels } from './support/text-channels.ts';

// POST /v1/chat/completions takes null for every field the OpenAI API types `| null` (openai@6.49
// ChatCompletionCreateParamsBase), meaning not set: the hold, a translated upstream body and the
// answer are those of the same call with the field left out; an openai upstream gets it as sent.

const NULLS = {
  max_tokens: null, max_completion_tokens: null, temperature: null, top_p: null, n: null, stop: null, stream: null, stream_options: null,
  frequency_penalty: null, presence_penalty: null, logprobs: null, top_logprobs: null, logit_bias: null, seed: null, metadata: null, modalities: null,
  reasoning_effort: null, safety_identifier: null, service_tier: null, store: null, audio: null, prediction: null, prompt_cache_key: null,
  prompt_cache_retention: null, moderation: null, verbosity: null,
};

const s = useTextChannels();

const body = (model: string, extra: object = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });
const chat = (payload: object, headers = s.auth) => s.t.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload });

describe(`chat completions: null is not set [${backendName}]`, () => {
  it('the defect as reported, and every nullable field null: 200, decoded as if left out', async () => {
    const reported = await chat({ model: SIMULATED, temperature: null, max_tokens: null, messages: [{ role: 'user', content: 'hi' }] });
    expect(reported.statusCode, reported.body).toBe(200);
    const all = await chat(body(SIMULATED, NULLS));
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json()).toMatchObject({ object: 'chat.completion', choices: [{ finish_reason: 'stop' }] });
    expect(FORMATS.chat.decodeRequest(body(SIMULATED, NULLS))).toEqual(FORMATS.chat.decodeRequest(body(SIMULATED)));
  });

  it('the hold: a null ceiling is held as none; a null max_completion_tokens leaves max_tokens to say it', async () => {
    const broke = (await seedAccount(s.t.ctx, 0)).auth;
    const refusal = async (extra: object) => {
      const res = await chat(body(SIMULATED, extra), broke);
      expect(res.statusCode, res.body).toBe(402);
      return res.json().error.message as string;
    };
    const absent = await refusal({});
    expect(absent).toContain(`plus ${DEFAULT_MAX_OUTPUT} output tokens`);
    expect(await refusal({ max_tokens: null })).toBe(absent);
    expect(await refusal({ max_tokens: null, max_completion_tokens: null })).toBe(absent);
    expect(await refusal({ max_completion_tokens: null, max_tokens: 16 })).toContain('plus 16 output tokens');
  });

  it('a translated upstream gets the body of the call without the nulls, whole and streamed', async () => {
    for (const stream of [{}, { stream: true }]) {
      const left = await chat(body(MESSAGES, stream));
      expect(left.statusCode, left.body).toBe(200);
      const without = s.fakes.messages.requests.at(-1)!.body;
      const nulled = await chat(body(MESSAGES, { ...NULLS, ...stream }));
      expect(nulled.statusCode, nulled.body).toBe(200);
      expect(s.fakes.messages.requests.at(-1)!.body).toEqual(without);
    }
  });

  it('an openai upstream gets them as sent (the API takes them); a stream that did not ask for usage gets none', async () => {
    const whole = await chat(body(OPENAI, NULLS));
    expect(whole.statusCode, whole.body).toBe(200);
    expect(s.fakes.openai.requests.at(-1)!.body).toMatchObject({ max_tokens: null, temperature: null, n: null });
    const streamed = await chat(body(OPENAI, { ...NULLS, stream: true }));
    expect(streamed.statusCode, streamed.body).toBe(200);
    expect(streamed.body).toContain('data: [DONE]');
    expect(sseData(streamed.body).every((chunk) => chunk.usage == null)).toBe(true);
  });

  it('any other value is checked as before', async () => {
    for (const bad of [{ max_tokens: 0 }, { max_tokens: 'x' }, { max_tokens: 1.5 }, { max_completion_tokens: 65537 }, { temperature: 3 }, { top_p: -1 }, { n: 2 }, { temperature: 'warm' }]) {
      const res = await chat(body(SIMULATED, bad));
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().error.message).toMatch(new RegExp(`^${Object.keys(bad)[0]} must be`));
      // Only the value's own fault: not the union's "must be null" nor its "must match a schema in anyOf".
      expect(res.json().error.message).not.toMatch(/null|anyOf/);
    }
  });
});
