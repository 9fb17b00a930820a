import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Agent, request } from 'undici';
import { startS3Server } from '../test/support/s3-server.ts';
import { ADMIN, benchKey, json, machine, pinSelf, startServer } from './lib.ts';

// Result files (issue 21). 1) Re-hosting: a relay task whose upstream file is FILE_MB (200) MB, next
// to a plain streamed copy of the same file from the same local upstream to disk and to the S3
// server: throughput ratio, and the gateway's peak RSS growth while it stores the file. 2) /files
// serving a 20 MB file at 50 connections, next to @fastify/static serving the same file.
pinSelf();
const MB = 1024 * 1024;
const FILE_MB = Number(process.env.FILE_MB ?? 200);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-bench-files-'));

function makeFile(name: string, megabytes: number): string {
  const file = path.join(dir, name);
  const fd = fs.openSync(file, 'w');
  const chunk = randomBytes(MB);
  for (let i = 0; i < megabytes; i++) fs.writeSync(fd, chunk);
  fs.closeSync(fd);
  return file;
}

/** A relay upstream: every task completes at once with `/file`, streamed from `file` on disk. */
async function upstream(file: string) {
  const state = { fileStartedAt: 0 };
  const server = http.createServer((req, res) => {
    if (req.method === 'POST') return req.resume().on('end', () => res.end(JSON.stringify({ data: [{ task_id: `up_${Date.now()}` }] })));
    if (req.url?.startsWith('/v1/tasks/')) return res.end(JSON.stringify({ data: { status: 'completed', result: { images: [{ url: [`${url}/file`] }] } } }));
    state.fileStartedAt = performance.now();
    res.writeHead(200, { 'content-length': fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, state, close: () => server.close() };
}

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

async function rehost(label: string, file: string, env: Record<string, string>, keep = false) {
  const up = await upstream(file);
  const gateway = await startServer('src/main.ts', { DATABASE_URL: `sqlite:${path.join(dir, `${label}.db`)}`, ADMIN_TOKEN: ADMIN, WORKERS: '4', RELAY_POLL_MS: '20', JOB_POLL_MS: '20', ...env });
  const admin = { authorization: `Bearer ${ADMIN}` };
  await json('POST', `${gateway.url}/admin/channels`, admin, { name: 'up', type: 'relay', base_url: up.url, models: ['imggen-2'], priority: 10 });
  const auth = { authorization: `Bearer ${await benchKey(gateway.url)}` };
  const before = rssOf(gateway.child.pid!);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(gateway.child.pid!))), 20);
  const id = (await json('POST', `${gateway.url}/v1/images/generations`, auth, { model: 'imggen-2', prompt: 'x', size: '1:1' })).data[0].task_id;
  let task: any;
  do {
    await new Promise((r) => setTimeout(r, 10));
    task = (await json('GET', `${gateway.url}/v1/tasks/${id}`, auth)).data;
  } while (task.status !== 'completed' && task.status !== 'failed');
  const seconds = (performance.now() - up.state.fileStartedAt) / 1000;
  clearInterval(sampler);
  if (task.status !== 'completed') throw new Error(`rehost failed: ${JSON.stringify(task.error)}`);
  if (!keep) gateway.child.kill('SIGKILL');
  up.close();
  return { gateway, seconds, rssGrowthMb: (peak - before) / MB, link: task.result.images[0].url[0] as string };
}

async function plainCopy(file: string, to: 'disk' | S3Client) {
  const up = await upstream(file);
  const started = performance.now();
  const res = await request(`${up.url}/file`);
  if (to === 'disk') await pipeline(res.body, fs.createWriteStream(path.join(dir, 'copy.bin')));
  else await new Upload({ client: to, params: { Bucket: 'results', Key: 'plain-copy.bin', Body: res.body }, queueSize: 2, partSize: 8 * MB }).done();
  up.close();
  return (performance.now() - started) / 1000;
}

/** CONNECTIONS loops each downloading `url` whole, again and again, for BENCH_SECONDS (after a warm-up). */
async function download(name: string, url: string) {
  const connections = 50;
  const agent = new Agent({ connections });
  const run = async (ms: number) => {
    let done = 0;
    let failed = 0;
    const until = performance.now() + ms;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < until) {
          const res = await request(url, { dispatcher: agent });
          await res.body.dump({ limit: Infinity });
          if (res.statusCode === 200) done++;
          else failed++;
        }
      }),
    );
    return { done, failed };
  };
  await run(2000);
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const started = performance.now();
  const { done, failed } = await run(seconds * 1000);
  await agent.close();
  return { name, perSecond: done / ((performance.now() - started) / 1000), failed };
}

const big = makeFile('big.bin', FILE_MB);
const s3 = await startS3Server();
const s3Client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
const rate = (s: number) => `${(FILE_MB / s).toFixed(0)} MB/s`;

console.log(`\n## Re-hosting a ${FILE_MB} MB upstream file (${machine()})\n`);
console.log('| path | seconds | throughput | vs plain copy | gateway peak RSS growth |\n|---|---|---|---|---|');
const diskCopy = await plainCopy(big, 'disk');
const local = await rehost('local', big, { FILES_DIR: path.join(dir, 'store'), RESULT_MAX_BYTES: String(4 * 1024 * MB) });
console.log(`| plain streamed copy to disk | ${diskCopy.toFixed(2)} | ${rate(diskCopy)} | | |`);
console.log(`| gateway re-host, local store | ${local.seconds.toFixed(2)} | ${rate(local.seconds)} | ${((diskCopy / local.seconds) * 100).toFixed(0)}% | ${local.rssGrowthMb.toFixed(1)} MB |`);
const s3Copy = await plainCopy(big, s3Client);
const viaS3 = await rehost('s3', big, { ...s3.env('bench'), RESULT_MAX_BYTES: String(4 * 1024 * MB) });
console.log(`| plain streamed copy to S3 (s3rver) | ${s3Copy.toFixed(2)} | ${rate(s3Copy)} | | |`);
console.log(`| gateway re-host, S3 store (s3rver) | ${viaS3.seconds.toFixed(2)} | ${rate(viaS3.seconds)} | ${((s3Copy / viaS3.seconds) * 100).toFixed(0)}% | ${viaS3.rssGrowthMb.toFixed(1)} MB |`);
s3Client.destroy();
await s3.stop();

console.log(`\n## /files serving a 20 MB file at 50 connections\n`);
const small = makeFile('twenty.bin', 20);
const storeDir = path.join(dir, 'store20');
const served = await rehost('serve', small, { FILES_DIR: storeDir }, true);
const staticDir = path.join(dir, 'static');
fs.mkdirSync(staticDir);
fs.copyFileSync(small, path.join(staticDir, 'twenty.bin'));
const staticServer = await startServer('bench/static-server.ts', { STATIC_DIR: staticDir }, '/twenty.bin');
const baseline = await download('@fastify/static', `${staticServer.url}/twenty.bin`);
const files = await download('gateway /files', served.link);
console.log('| target | downloads/s | MB/s | failed | vs @fastify/static |\n|---|---|---|---|---|');
for (const row of [baseline, files]) {
  console.log(`| ${row.name} | ${row.perSecond.toFixed(1)} | ${(row.perSecond * 20).toFixed(0)} | ${row.failed} | ${((row.perSecond / baseline.perSecond) * 100).toFixed(0)}% |`);
}
served.gateway.child.kill('SIGKILL');
staticServer.child.kill('SIGKILL');
fs.rmSync(dir, { recursive: true, force: true });
process.exit(0);
