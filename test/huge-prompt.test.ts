import { monitorEventLoopDelay } from 'node:perf_hooks';
import { countTokens } from 'gpt-tokenizer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getUser } from '../src/modules/accounts/accounts.repo.ts';
import { countText } from '../src/lib/tokens/token-count.ts';
import { backendName, createTestApp, seedAccount, type TestApp } from './harness.ts';

// Issue 20 item 2: a huge prompt must not freeze the process. Every request here runs through
// app.inject in this process, so the event loop's longest stall while it is answered is the stall
// every other request of the gateway would have seen. Today's code tokenized on the loop first:
// seconds for these prompts.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Space-separated words of random letters (seeded): text the tokenizer has no shortcut for. */
function randomWords(bytes: number, seed: number): string {
  let state = seed;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const words: string[] = [];
  for (let length = 0; length < bytes; ) {
    let word = '';
    const letters = 3 + Math.floor(random() * 8);
    for (let i = 0; i < letters; i++) word += String.fromCharCode(97 + Math.floor(random() * 26));
    words.push(word);
    length += letters + 1;
  }
  return words.join(' ');
}

/** The answer and the event loop's longest stall (ms) while it was being produced. */
async function watched(url: string, headers: Record<string, string>, body: object) {
  const payload = JSON.stringify(body);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  try {
    const res = await t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload });
    return { res, stallMs: delay.max / 1e6 };
  } finally {
    delay.disable();
  }
}

const native = (text: string, maxOutputTokens = 64) => ({ contents: [{ role: 'user', parts: [{ text }] }], generationConfig: { maxOutputTokens } });
const messages = (model: string, text: string) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: text }] });
const nativeError = (status: number, name: string) => ({ error: { code: status, message: expect.any(String), status: name } });
const messagesError = (status: number, type: string) => ({ type: 'error', error: { code: status, message: expect.any(String), type } });

// ~1 token per 2.1 bytes: 2 MB is ~950,000 tokens (within the 1,048,576 of textgen-2.5-pro), 600 KB
// ~285,000 (past the 200,000 of chatgen-4-sonnet).
const HUGE = randomWords(2_000_000, 1);
const HUGE_TOO = randomWords(2_000_000, 4);
const OVER_SONNET = randomWords(600_000, 2);

describe(`a $0 account is refused before any tokenizing [${backendName}]`, () => {
  it('native: a 2 MB prompt is a 402 in the native envelope, and the loop never stalls 1 s', async () => {
    const broke = await seedAccount(t.ctx, 0);
    const { res, stallMs } = await watched('/v1beta/models/textgen-2.5-pro:generateContent', broke.auth, native(HUGE));
    expect(res.statusCode).toBe(402);
    expect(res.json()).toEqual(nativeError(402, 'PAYMENT_REQUIRED'));
    expect(stallMs).toBeLessThan(1000);
  });

  it('messages: the same prompt is a 402 in the messages envelope, and the loop never stalls 1 s', async () => {
    const broke = await seedAccount(t.ctx, 0);
    const { res, stallMs } = await watched('/v1/messages', { 'x-api-key': broke.key }, messages('textgen-2.5-flash', HUGE_TOO));
    expect(res.json()).toEqual(messagesError(402, 'payment_required'));
    expect(stallMs).toBeLessThan(1000);
  });
});

describe(`a prompt past the model's context window is a 400 [${backendName}]`, () => {
  it('native generateContent: 400 INVALID_ARGUMENT, nothing charged, the loop never stalls 1 s', async () => {
    const account = await seedAccount(t.ctx, 100);
    const { res, stallMs } = await watched('/v1beta/models/chatgen-4-sonnet:generateContent', account.auth, native(OVER_SONNET));
    expect(res.json()).toEqual(nativeError(400, 'INVALID_ARGUMENT'));
    expect(res.json().error.message).toContain('context window of chatgen-4-sonnet (200000 tokens)');
    expect(stallMs).toBeLessThan(1000);
    expect(await getUser(t.ctx.db, account.user.id)).toMatchObject({ balance: 100_000_000, used: 0 });
  });

  it('messages, plain and streamed: 400 in the messages envelope', async () => {
    const account = await seedAccount(t.ctx, 100);
    for (const stream of [false, true]) {
      const { res, stallMs } = await watched('/v1/messages', { 'x-api-key': account.key }, { ...messages('chatgen-4-sonnet', OVER_SONNET), stream });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(messagesError(400, 'invalid_request_error'));
      expect(stallMs).toBeLessThan(1000);
    }
    expect(await getUser(t.ctx.db, account.user.id)).toMatchObject({ balance: 100_000_000, used: 0 });
  });
});

describe(`countTokens obeys the same limits [${backendName}]`, () => {
  it('past the context window: 400 in the native envelope, the loop never stalls 1 s', async () => {
    const account = await seedAccount(t.ctx, 1);
    const { res, stallMs } = await watched('/v1beta/models/chatgen-4-sonnet:countTokens', account.auth, native(OVER_SONNET));
    expect(res.json()).toEqual(nativeError(400, 'INVALID_ARGUMENT'));
    expect(stallMs).toBeLessThan(1000);
  });

  it('a 2 MB prompt within the window is counted off the loop, to the exact count', async () => {
    const account = await seedAccount(t.ctx, 0);
    const { res, stallMs } = await watched('/v1beta/models/textgen-2.5-pro:countTokens', account.auth, native(HUGE));
    expect(res.statusCode).toBe(200);
    expect(res.json().data.totalTokens).toBe(countText(HUGE));
    expect(stallMs).toBeLessThan(1000);
  });
});

describe(`large prompts that can be paid are served [${backendName}]`, () => {
  it('a 300 KB prompt: counted off the loop, held and charged at its exact count', async () => {
    const account = await seedAccount(t.ctx, 10);
    const prompt = randomWords(300_000, 3);
    const { res, stallMs } = await watched('/v1beta/models/chatgen-4-sonnet:generateContent', account.auth, native(prompt));
    expect(res.statusCode).toBe(200);
    // Space-separated words count exactly as the tokenizer counts the whole text.
    expect(res.json().data.usageMetadata.promptTokenCount).toBe(countTokens(prompt));
    expect(stallMs).toBeLessThan(1000);
  });

  it('a prompt of 100,000 letters "a" in one run does not stall the loop', async () => {
    const account = await seedAccount(t.ctx, 10);
    const { res, stallMs } = await watched('/v1/messages', { 'x-api-key': account.key }, messages('chatgen-4-haiku', 'a'.repeat(100_000)));
    expect(res.statusCode).toBe(200);
    expect(res.json().usage.input_tokens).toBeGreaterThan(100_000 / 128);
    expect(stallMs).toBeLessThan(1000);
  });

  it('special tokens in a prompt are text: "<|endoftext|>" is counted, not a 500', async () => {
    const account = await seedAccount(t.ctx, 1);
    const res = await t.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': account.key }, payload: messages('chatgen-4-haiku', 'before <|endoftext|> after') });
    expect(res.statusCode).toBe(200);
    expect(res.json().usage.input_tokens).toBeGreaterThan(3);
  });
});

describe(`the other text surfaces obey the same limits [${backendName}]`, () => {
  const chat = (text: string) => ({ model: 'chatgen-4-sonnet', max_tokens: 64, messages: [{ role: 'user', content: text }] });
  const chatError = (status: number, type: string) => ({ error: { code: status, message: expect.any(String), type, param: null } });

  it('/v1/chat/completions: a $0 account is a 402 and a prompt past the window a 400, in the OpenAI-style envelope', async () => {
    const broke = await seedAccount(t.ctx, 0);
    const refused = await watched('/v1/chat/completions', broke.auth, chat(HUGE));
    expect(refused.res.json()).toEqual(chatError(402, 'payment_required'));
    expect(refused.stallMs).toBeLessThan(1000);
    const account = await seedAccount(t.ctx, 100);
    const tooLong = await watched('/v1/chat/completions', account.auth, chat(OVER_SONNET));
    expect(tooLong.res.json()).toEqual(chatError(400, 'invalid_request_error'));
    expect(tooLong.stallMs).toBeLessThan(1000);
  });

  it('/gemini/v1beta/models/...:countTokens past the window: 400 in the native envelope', async () => {
    const account = await seedAccount(t.ctx, 1);
    const { res, stallMs } = await watched('/gemini/v1beta/models/chatgen-4-sonnet:countTokens', { 'x-goog-api-key': account.key }, native(OVER_SONNET));
    expect(res.json()).toEqual(nativeError(400, 'INVALID_ARGUMENT'));
    expect(stallMs).toBeLessThan(1000);
  });

  it('/v1/messages/count_tokens: 400 past the window in the messages envelope; within it, counted off the loop', async () => {
    const account = await seedAccount(t.ctx, 0);
    const over = await watched('/v1/messages/count_tokens', { 'x-api-key': account.key }, { model: 'chatgen-4-sonnet', messages: [{ role: 'user', content: OVER_SONNET }] });
    expect(over.res.json()).toEqual(messagesError(400, 'invalid_request_error'));
    expect(over.stallMs).toBeLessThan(1000);
    const within = await watched('/v1/messages/count_tokens', { 'x-api-key': account.key }, { model: 'textgen-2.5-pro', messages: [{ role: 'user', content: HUGE_TOO }] });
    expect(within.res.json()).toEqual({ input_tokens: countText(HUGE_TOO) });
    expect(within.stallMs).toBeLessThan(1000);
  });
});
