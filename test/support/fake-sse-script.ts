import http from 'node:http';
import type { AddressInfo } from 'node:net';

// An upstream that answers every POST with a scripted event stream, written piece by piece with a
// pause between pieces so each piece reaches the gateway as its own read: a script can split an
// event, or a multi-byte character, across reads. `end` says how the answer ends: whole, cut off
// (the socket destroyed after the last piece), or held open (a piece repeated every 20 ms until
// the caller goes away, which counts as `cancelled`).

export interface SseScript {
  pieces: (string | Buffer)[];
  end: 'whole' | 'cut' | 'hold';
  /** With `end: 'hold'`: what is written every 20 ms after the pieces. */
  repeat?: string;
}

export interface FakeSseScript {
  url: string;
  script: SseScript;
  requests: { path: string; headers: http.IncomingHttpHeaders; body: any }[];
  cancelled: number;
  close(): Promise<void>;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeSseScript(): Promise<FakeSseScript> {
  const fake = { script: { pieces: [], end: 'whole' }, requests: [], cancelled: 0 } as unknown as FakeSseScript;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      fake.requests.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const { pieces, end, repeat } = fake.script;
      res.on('close', () => {
        if (!res.writableFinished) fake.cancelled++;
      });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.socket?.setNoDelay(true);
      for (const piece of pieces) {
        if (res.destroyed) return;
        res.write(piece);
        await pause(15);
      }
      if (end === 'whole') return res.end();
      if (end === 'cut') return res.destroy();
      while (!res.destroyed) {
        res.write(repeat ?? '');
        await pause(20);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return fake;
}

/** One server-sent event as the messages API writes it. */
export const sseEvent = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** Splits `text` into byte pieces at the given byte offsets. */
export function splitBytes(text: string, offsets: number[]): Buffer[] {
  const bytes = Buffer.from(text);
  return [0, ...offsets].map((start, i) => bytes.subarray(start, offsets[i] ?? bytes.length));
}
