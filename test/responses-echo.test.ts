import { describe, expect, it } from 'vitest';
import { backendName } from './harness.ts';
import { MESSAGES, OPENAI, SIMULATED, sseData, useTextChannels } from './support/text-channels.ts';

// A follow-up's answer names the response it continues (previous_response_id), whole, in every
// response.* snapshot of its stream and read back by GET, on each channel kind: translated (the
// simulator, a messages upstream), where the gateway names it, and an openai upstream, which keeps
// the conversation itself: it is sent the id and names it in its own answer
// (responses-upstream.test.ts follows that channel's follow-ups further).

const s = useTextChannels();

const create = (payload: object) => s.t.app.inject({ method: 'POST', url: '/v1/responses', headers: s.auth, payload });
const read = async (id: string) => {
  const res = await s.t.app.inject({ method: 'GET', url: `/v1/responses/${id}`, headers: s.auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

describe(`responses: previous_response_id is echoed [${backendName}]`, () => {
  for (const model of [SIMULATED, OPENAI, MESSAGES]) {
    it(`${model}: whole, streamed and stored`, async () => {
      const first = await create({ model, input: 'hello' });
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json().previous_response_id).toBeNull();
      const previous = first.json().id as string;

      const whole = await create({ model, previous_response_id: previous, input: 'more' });
      expect(whole.statusCode, whole.body).toBe(200);
      expect(whole.json().previous_response_id).toBe(previous);
      expect((await read(whole.json().id)).previous_response_id).toBe(previous);

      const streamed = await create({ model, previous_response_id: whole.json().id, input: 'again', stream: true });
      expect(streamed.statusCode, streamed.body).toBe(200);
      const snapshots = sseData(streamed.body).filter((e) => e.response);
      expect(snapshots.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.completed']);
      for (const e of snapshots) expect(e.response.previous_response_id, e.type).toBe(whole.json().id);
      expect((await read(snapshots.at(-1).response.id)).previous_response_id).toBe(whole.json().id);
    });
  }

  it('the openai upstream that answered is sent the id, not the conversation', async () => {
    const first = (await create({ model: OPENAI, input: 'hello' })).json();
    const next = await create({ model: OPENAI, previous_response_id: first.id, input: 'more' });
    expect(next.statusCode, next.body).toBe(200);
    expect(s.fakes.openai.requests.at(-1)!.body).toEqual({ model: OPENAI, previous_response_id: first.id, input: 'more' });
    expect(next.json()).toMatchObject({ previous_response_id: first.id, output: [{ content: [{ text: 'echo: more' }] }] });
  });
});
