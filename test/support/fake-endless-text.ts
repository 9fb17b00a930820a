import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A text upstream with a lot to say: every streamed call (messages, chat-completions, the Gemini
// API / native :streamGenerateContent) answers `limit` bytes of text deltas in its protocol's
// events, as fast as its reader takes them. It respects backpressure itself (it waits for 'drain'),
// so `written` is what the gateway actually took off the connection, not what was queued here.

export interface FakeEndlessText {
  url: string;
  /** Bytes each streamed answer would write when read to the end. */
  limit: number;
  /** Bytes taken by readers, over every answer so far. */
  written: number;
  started: number;
  /** Answers that wrote their whole `limit`. */
  finished: number;
  /** Answers whose reader went away before the end. */
  cancelled: number;
  close(): Promise<void>;
}

const TEXT = 'all work and no play '.repeat(48);
const event = (name: string | undefined, data: unknown) => `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

/** About 64 KiB of one protocol's delta events, and what opens and closes its stream. */
function protocolOf(path: string) {
  if (path.endsWith('/v1/messages')) {
    const delta = event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: TEXT } });
    return {
      head: event('message_start', { type: 'message_start', message: { id: 'msg_up', type: 'message', role: 'assistant', content: [], model: 'up', usage: { input_tokens: 5, output_tokens: 1 } } }),
      block: Buffer.from(delta.repeat(Math.ceil(65_536 / delta.length))),
      tail: event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 10 } }) + event('message_stop', { type: 'message_stop' }),
    };
  }
  if (path.endsWith('/v1/chat/completions')) {
    const delta = event(undefined, { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: TEXT } }] });
    return { head: '', block: Buffer.from(delta.repeat(Math.ceil(65_536 / delta.length))), tail: event(undefined, { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) + 'data: [DONE]\n\n' };
  }
  const delta = event(undefined, { candidates: [{ content: { role: 'model', parts: [{ text: TEXT }] } }] });
  const tail = event(undefined, { candidates: [{ content: { role: 'model', parts: [{ text: '.' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 10 } });
  return { head: '', block: Buffer.from(delta.repeat(Math.ceil(65_536 / delta.length))), tail };
}

export async function startFakeEndlessText(limit: number): Promise<FakeEndlessText> {
  const fake = { limit, written: 0, started: 0, finished: 0, cancelled: 0 } as FakeEndlessText;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      fake.started++;
      const { head, block, tail } = protocolOf(req.url?.split('?')[0] ?? '');
      let wake: (() => void) | undefined;
      const woken = () => (wake?.(), (wake = undefined));
      res.on('drain', woken);
      res.on('close', () => {
        if (!res.writableFinished) fake.cancelled++;
        woken();
      });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(head);
      let sent = 0;
      while (sent < fake.limit && !res.destroyed) {
        const taken = res.write(block);
        sent += block.length;
        fake.written += block.length;
        if (!taken) await new Promise<void>((resolve) => (wake = resolve));
      }
      if (res.destroyed) return;
      res.end(tail);
      fake.finished++;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return fake;
}
