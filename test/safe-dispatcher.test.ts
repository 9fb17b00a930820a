import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { safeDispatcher } from '../src/lib/net/safe-dispatcher.ts';
import { systemResolver } from '../src/lib/net/target.ts';

// The checking dispatcher carries callbacks and every caller-given URL the gateway fetches. A host
// written as an address (127.0.0.1, the metadata address) is never looked up, so it must be
// checked on its own: a caller's result or reference URL must not reach this machine's services.

let server: http.Server;
let port: number;
beforeAll(async () => {
  server = http.createServer((_req, res) => res.end('internal'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('the checking dispatcher and address literals', () => {
  it('refuses a loopback or private address literal unless private addresses are allowed', async () => {
    const strict = safeDispatcher(systemResolver, false, 2000);
    for (const url of [`http://127.0.0.1:${port}/`, `http://[::1]:${port}/`, 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.5/']) {
      await expect(request(url, { dispatcher: strict }), url).rejects.toThrow(/refused/);
    }
    await strict.close();
    const open = safeDispatcher(systemResolver, true, 2000);
    const res = await request(`http://127.0.0.1:${port}/`, { dispatcher: open });
    expect(await res.body.text()).toBe('internal');
    await open.close();
  });

  it('still refuses a name that resolves to a private address', async () => {
    const strict = safeDispatcher(async () => ['127.0.0.1'], false, 2000);
    await expect(request(`http://internal.example:${port}/`, { dispatcher: strict })).rejects.toThrow(/refused/);
    await strict.close();
  });
});
