import http from 'node:http';

// A messages (and Responses) upstream that streams (bench only): every call gets the event sequence of a streamed
// message with EVENTS (200) text deltas of about 20 tokens each, written as fast as the socket takes them.
const EVENTS = Number(process.env.EVENTS ?? 200);
const words = 'the gateway streams every token it gets from the upstream to the caller at once and bills what was sent'.split(' ');
const deltaText = Array.from({ length: 20 }, (_, i) => `${words[i % words.length]} `).join('');
const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const head =
  event('message_start', { type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', content: [], model: 'chatgen-4-haiku', stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } }) +
  event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
const delta = event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: deltaText } });
const tail =
  event('content_block_stop', { type: 'content_block_stop', index: 0 }) +
  event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: EVENTS * 20 } }) +
  event('message_stop', { type: 'message_stop' });

// The same answer as a Responses stream (POST /v1/responses), each event with its sequence number.
const responses = () => {
  let n = 0;
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n++, ...data })}\n\n`;
  const base = { id: 'resp_bench', object: 'response', created_at: 1, model: 'chatgen-4-haiku', output: [], usage: null };
  const item = { id: 'msg_bench', type: 'message', role: 'assistant', status: 'in_progress', content: [] };
  const part = { type: 'output_text', text: '', annotations: [] };
  const text = deltaText.repeat(EVENTS);
  const done = { ...item, status: 'completed', content: [{ ...part, text }] };
  return {
    head: ev('response.created', { response: { ...base, status: 'in_progress' } }) + ev('response.output_item.added', { output_index: 0, item }) + ev('response.content_part.added', { item_id: 'msg_bench', output_index: 0, content_index: 0, part }),
    delta: () => ev('response.output_text.delta', { item_id: 'msg_bench', output_index: 0, content_index: 0, delta: deltaText }),
    tail: () =>
      ev('response.output_text.done', { item_id: 'msg_bench', output_index: 0, content_index: 0, text }) +
      ev('response.content_part.done', { item_id: 'msg_bench', output_index: 0, content_index: 0, part: done.content[0] }) +
      ev('response.output_item.done', { output_index: 0, item: done }) +
      ev('response.completed', { response: { ...base, status: 'completed', output: [done], usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: EVENTS * 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 + EVENTS * 20 } } }),
  };
};

http
  .createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      if (req.url?.endsWith('/responses')) {
        const r = responses();
        res.write(r.head);
        for (let i = 0; i < EVENTS; i++) res.write(r.delta());
        return res.end(r.tail());
      }
      res.write(head);
      for (let i = 0; i < EVENTS; i++) res.write(delta);
      res.end(tail);
    });
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
