import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'undici';
import { ADMIN, json, load, machine, pinSelf, ROOT, startServer, table, tempSqlite, type Measured } from './lib.ts';

// Messages passthrough to a local upstream that answers at once, in one run against (a) calling the
// upstream directly, (b) a bare Node http proxy, (c) the Portkey gateway from npm (installed here
// into bench/.portkey, which git ignores). Servers on core 0, load on core 1.
pinSelf();
const PORTKEY = path.join(ROOT, 'bench/.portkey');
const PORTKEY_VERSION = '1.15.2';
const body = JSON.stringify({ model: 'chatgen-4-haiku', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] });
const hasTaskset = spawnSync('which', ['taskset']).status === 0;

function installPortkey(): string {
  const entry = path.join(PORTKEY, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  if (!fs.existsSync(entry)) {
    fs.mkdirSync(PORTKEY, { recursive: true });
    fs.writeFileSync(path.join(PORTKEY, 'package.json'), '{"name":"portkey-bench","private":true}\n');
    execFileSync('npm', ['install', '--prefix', PORTKEY, '--no-audit', '--no-fund', `@portkey-ai/gateway@${PORTKEY_VERSION}`], { stdio: 'inherit' });
  }
  return entry;
}

async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on ${port}`);
}

async function startPortkey(entry: string, port: number): Promise<void> {
  const args = [entry, `--port=${port}`, '--headless'];
  const child = spawn(hasTaskset ? 'taskset' : process.execPath, hasTaskset ? ['-c', '0', process.execPath, ...args] : args, { env: { ...process.env, NODE_ENV: 'production' }, stdio: 'ignore' });
  process.on('exit', () => child.kill('SIGKILL'));
  await waitForPort(port);
}

/** Added latency: 2,000 sequential requests on one keep-alive connection; the p50 and p99. */
async function probe(url: string, headers: Record<string, string>): Promise<{ p50: number; p99: number }> {
  const target = new URL(url);
  const client = new Client(target.origin, { pipelining: 1 });
  const times: number[] = [];
  for (let i = 0; i < 2200; i++) {
    const start = process.hrtime.bigint();
    const res = await client.request({ path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    await res.body.dump();
    if (i >= 200) times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  await client.close();
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)]!, p99: times[Math.floor(times.length * 0.99)]! };
}

const upstream = await startServer('bench/fake-messages-upstream.ts', {}, '/v1/messages');
const bare = await startServer('bench/bare-proxy.ts', { UPSTREAM: upstream.url }, '/v1/messages');
const portkeyPort = 19900 + Math.floor(Math.random() * 90);
await startPortkey(installPortkey(), portkeyPort);
const gateway = await startServer('src/main.ts', { DATABASE_URL: tempSqlite(), ADMIN_TOKEN: ADMIN, WORKERS: '0' });

// The gateway: a messages channel to the upstream, an account and a key; auth, rate limit and billing on.
const admin = { authorization: `Bearer ${ADMIN}` };
const channels = (await json('GET', `${gateway.url}/admin/channels`, admin)).data;
const simulator = channels.find((c: { type: string }) => c.type === 'simulator');
await fetch(`${gateway.url}/admin/channels/${simulator.id}`, { method: 'PATCH', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ models: simulator.models.filter((m: string) => m !== 'chatgen-4-haiku') }) });
await json('POST', `${gateway.url}/admin/channels`, admin, { name: 'bench-upstream', type: 'messages', base_url: upstream.url, secret: 'upstream-key', models: ['chatgen-4-haiku'] });
const user = await json('POST', `${gateway.url}/admin/users`, admin, { name: 'bench', balance: 1_000_000 });
const key = (await json('POST', `${gateway.url}/admin/keys`, admin, { user_id: user.id, unlimited: true, rate_limit_rpm: 10_000_000 })).key;

const targets: [string, string, Record<string, string>][] = [
  ['upstream, called directly', `${upstream.url}/v1/messages`, {}],
  ['bare Node http proxy', `${bare.url}/v1/messages`, {}],
  [`Portkey gateway ${PORTKEY_VERSION}`, `http://127.0.0.1:${portkeyPort}/v1/messages`, { 'x-portkey-provider': 'anthropic', 'x-portkey-custom-host': `${upstream.url}/v1`, 'x-api-key': 'upstream-key', 'anthropic-version': '2023-06-01' }],
  ['this gateway (auth, rate limit, billing)', `${gateway.url}/v1/messages`, { 'x-api-key': key }],
];

const rows: Measured[] = [];
const probes: string[] = [];
let direct = 0;
for (const [name, url, headers] of targets) {
  rows.push(await load(name, { url, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }));
  const p = await probe(url, headers);
  if (!direct) direct = p.p50;
  probes.push(`| ${name} | ${p.p50.toFixed(3)} | ${p.p99.toFixed(3)} | ${direct === p.p50 ? '-' : `+${(p.p50 - direct).toFixed(3)}`} |`);
}
console.log(`\n${machine()}\n\n${table(rows, rows[1])}\n`);
console.log(`Sequential probe, 2,000 requests on one keep-alive connection (ms):\n\n| target | p50 | p99 | added p50 vs direct |\n|---|---|---|---|\n${probes.join('\n')}\n`);
process.exit(0);
