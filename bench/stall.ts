import { once } from 'node:events';
import { Client } from 'undici';
import { ADMIN, benchKey, json, machine, pinSelf, startServer, tempSqlite } from './lib.ts';

// Issue 20 item 2: how long one huge prompt stalls everyone else. The gateway runs as `npm start`
// runs it (tsx, SQLite, one process pinned to core 0, its token thread included); this process,
// on core 1, sends each request below. Two figures per request:
// - the gateway's own longest event-loop delay while it was answered: prom-client's
//   nodejs_eventloop_lag_max_seconds (a perf_hooks monitor, 10 ms resolution, reset by each scrape
//   of /metrics), scraped just before and just after;
// - the longest /healthz answer that a second connection, asking over and over, saw meanwhile (a
//   black-box view: it also holds this process's own pauses, such as writing a 10 MB body).
// "idle" is both with nothing else running. Each case runs STALL_ROUNDS times (3), worst kept.
// Prompts are space-separated words of random letters: text the tokenizer has no shortcut for.
pinSelf();
const ROUNDS = Number(process.env.STALL_ROUNDS ?? 3);

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
  return words.join(' ').slice(0, bytes);
}

const gateway = await startServer('src/main.ts', { DATABASE_URL: tempSqlite(), ADMIN_TOKEN: ADMIN, WORKERS: '0', ...(process.env.NODE_ARGS ? { NODE_ARGS: process.env.NODE_ARGS } : {}) });
const funded = { authorization: `Bearer ${await benchKey(gateway.url)}` };
const user = await json('POST', `${gateway.url}/admin/users`, { authorization: `Bearer ${ADMIN}` }, { name: 'broke', balance: 0 });
const brokeKey = await json('POST', `${gateway.url}/admin/keys`, { authorization: `Bearer ${ADMIN}` }, { user_id: user.id, unlimited: true });
const broke = { authorization: `Bearer ${brokeKey.key}` };

const probe = new Client(gateway.url);
const caller = new Client(gateway.url, { bodyTimeout: 120_000, headersTimeout: 120_000 });

/** The gateway's longest event-loop delay (ms) since the last scrape. */
async function loopLagMs(): Promise<number> {
  const res = await probe.request({ method: 'GET', path: '/metrics' });
  const text = await res.body.text();
  const line = text.split('\n').find((l) => l.startsWith('gateway_nodejs_eventloop_lag_max_seconds '));
  return Number(line?.split(' ')[1]) * 1000;
}

/** The gateway's longest loop delay and the longest /healthz answer (ms) while `during` runs. */
async function stalls<T>(during: () => Promise<T>): Promise<{ result: T; lagMs: number; probeMs: number }> {
  await loopLagMs();
  const { result, stallMs } = await longestProbe(during());
  return { result, lagMs: await loopLagMs(), probeMs: stallMs };
}

/** The longest /healthz answer (ms) while `during` runs. */
async function longestProbe<T>(during: Promise<T>): Promise<{ result: T; stallMs: number }> {
  let done = false;
  let longest = 0;
  const probing = (async () => {
    while (!done) {
      const started = performance.now();
      const res = await probe.request({ method: 'GET', path: '/healthz' });
      await res.body.dump();
      longest = Math.max(longest, performance.now() - started);
    }
  })();
  const result = await during.finally(() => (done = true));
  await probing;
  return { result, stallMs: longest };
}

async function post(path: string, headers: Record<string, string>, body: string) {
  const started = performance.now();
  const res = await caller.request({ method: 'POST', path, headers: { ...headers, 'content-type': 'application/json' }, body });
  const text = await res.body.text();
  return { status: res.statusCode, ms: performance.now() - started, message: res.statusCode === 200 ? text.slice(0, 60) : JSON.parse(text).error?.message };
}

const contents = (text: string) => JSON.stringify({ contents: [{ role: 'user', parts: [{ text }] }], generationConfig: { maxOutputTokens: 64 } });
const SMALL = randomWords(1_000, 1);
const HUGE = randomWords(10_000_000, 2);

const cases = [
  { name: '1 KB prompt, generateContent, funded key', path: '/v1beta/models/textgen-2.5-pro:generateContent', headers: funded, body: contents(SMALL) },
  { name: '1 KB prompt, countTokens, funded key', path: '/v1beta/models/textgen-2.5-pro:countTokens', headers: funded, body: contents(SMALL) },
  { name: '10 MB prompt, generateContent, $0 account', path: '/v1beta/models/textgen-2.5-pro:generateContent', headers: broke, body: contents(HUGE) },
  { name: '10 MB prompt, countTokens, funded key', path: '/v1beta/models/textgen-2.5-pro:countTokens', headers: funded, body: contents(HUGE) },
];

const idle = await stalls(() => new Promise((resolve) => setTimeout(resolve, 2000)));
const rows = [`| idle (2 s) | | | ${idle.lagMs.toFixed(1)} | ${idle.probeMs.toFixed(1)} |`];
for (const c of cases) {
  let lag = 0;
  let probeMs = 0;
  let last: Awaited<ReturnType<typeof post>> | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    const measured = await stalls(() => post(c.path, c.headers, c.body));
    lag = Math.max(lag, measured.lagMs);
    probeMs = Math.max(probeMs, measured.probeMs);
    last = measured.result;
    console.error(`${c.name}, round ${round + 1}: ${measured.result.status} in ${Math.round(measured.result.ms)} ms, loop lag ${measured.lagMs.toFixed(1)} ms, /healthz ${measured.probeMs.toFixed(1)} ms`);
  }
  rows.push(`| ${c.name} | ${last!.status} | ${Math.round(last!.ms)} | ${lag.toFixed(1)} | ${probeMs.toFixed(1)} |`);
  console.error(`${c.name}: ${last!.status} ${last!.message ?? ''}`);
}

console.log(`Machine: ${machine()}\n`);
console.log('| request | status | answered in ms | gateway loop: longest delay, ms | longest /healthz answer, ms |');
console.log('|---|---|---|---|---|');
console.log(rows.join('\n'));
await probe.close();
await caller.close();
// A gateway stopped by SIGTERM writes its --cpu-prof (NODE_ARGS) before it exits.
gateway.child.kill('SIGTERM');
await once(gateway.child, 'exit');
process.exit(0);
