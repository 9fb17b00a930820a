import type http from 'node:http';

// A hostile upstream's answer: JSON whose string never ends. 1 MiB writes as fast as the reader
// takes them (one reused buffer: the sender's memory stays flat), up to `limit` bytes, then the JSON
// is closed, so that a reader without a cap still ends (holding it all) and the test ends too.

export interface EndlessCount {
  sent: number;
}

export function sendEndlessJson(res: http.ServerResponse, opening: string, closing: string, count: EndlessCount, limit = 400 * 1024 * 1024): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(opening);
  const chunk = Buffer.alloc(1024 * 1024, 'A');
  let sent = 0;
  const more = () => {
    while (sent < limit && !res.destroyed) {
      sent += chunk.length;
      count.sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    if (!res.destroyed) res.end(closing);
  };
  more();
}
