import http from 'node:http';

// An upstream that answers every messages call at once with a fixed reply (bench only).
const reply = JSON.stringify({
  id: 'msg_bench',
  type: 'message',
  role: 'assistant',
  content: [{ type: 'text', text: 'Hello from the bench upstream.' }],
  model: 'chatgen-4-haiku',
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 8 },
});
http
  .createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) }).end(reply));
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
