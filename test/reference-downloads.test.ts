import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchReferences, type FetchLimits } from '../src/providers/openai/openai.references.ts';
import { DownloadSlots } from '../src/providers/reference-slots.ts';
import { ReferenceStore } from '../src/providers/reference-store.ts';
import { ReferencesBusy, UpstreamRejected } from '../src/core/task-provider.ts';
import { expectedDigest, startImageHost, startTrickleHost } from './support/reference-hosts.ts';

// The rules of one reference download, against real local hosts: its own deadline, a minimum rate,
// the task's signal, the memory budget (beyond it: spool files, removed on release), download slots
// per account, and spool directories of dead processes removed at start.

let images: Awaited<ReturnType<typeof startImageHost>>;
let trickle: Awaited<ReturnType<typeof startTrickleHost>>;
const roots: string[] = [];

beforeAll(async () => {
  images = await startImageHost();
  trickle = await startTrickleHost(200);
});
afterAll(async () => {
  await images.close();
  await trickle.close();
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

function spoolRoot(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-refs-'));
  roots.push(root);
  return root;
}

const filesUnder = (dir: string) => fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());

function limits(over: Partial<FetchLimits> = {}): FetchLimits {
  return {
    store: new ReferenceStore(64 * 1024 * 1024, spoolRoot()),
    slots: new DownloadSlots(8, 8),
    timeoutMs: 30_000,
    minBytesPerSecond: 0,
    windowMs: 60_000,
    busyRetryMs: 1000,
    ...over,
  };
}

/** Fetches one trickling reference; resolves with the refusal and how long until the host saw its connection closed. */
async function trickleRefusal(rules: FetchLimits, signal?: AbortSignal) {
  const before = trickle.connections.length;
  const started = Date.now();
  const err = await fetchReferences([['image_urls[0]', `${trickle.url}/slow.png`]], rules, { account: 'a', signal }).catch((e: unknown) => e);
  const connection = trickle.connections[before]!;
  for (let i = 0; i < 100 && connection.closedAt === undefined; i++) await new Promise((r) => setTimeout(r, 20));
  return { err: err as Error, closedAfter: connection.closedAt! - started };
}

describe('one reference download', () => {
  it('moving fewer bytes than the minimum rate in a window ends it: the task fails, the connection is closed', async () => {
    const { err, closedAfter } = await trickleRefusal(limits({ minBytesPerSecond: 1000, windowMs: 300 }));
    expect(err).toBeInstanceOf(UpstreamRejected);
    expect(err.message).toMatch(/^image_urls\[0\] could not be used: it arrived slower than 1000 bytes\/s/);
    expect(closedAfter).toBeLessThan(5000);
  });

  it('its own deadline ends it even when bytes keep coming', async () => {
    const { err, closedAfter } = await trickleRefusal(limits({ timeoutMs: 500 }));
    expect(err.message).toMatch(/did not arrive within 0.5 s/);
    expect(closedAfter).toBeLessThan(5000);
  });

  it("the task's signal (its deadline) ends it", async () => {
    const { err, closedAfter } = await trickleRefusal(limits(), AbortSignal.timeout(300));
    expect(err.message).toMatch(/the task ended before it arrived/);
    expect(closedAfter).toBeLessThan(5000);
  });
});

describe('the memory budget', () => {
  it('what does not fit waits in spool files, is read back byte for byte, and is deleted on release', async () => {
    const root = spoolRoot();
    const rules = limits({ store: new ReferenceStore(3 * 1024 * 1024, root) });
    const refs = await fetchReferences(['a', 'b', 'c'].map((name, i) => [`image_urls[${i}]`, `${images.url}/${name}?mb=2`]), rules, { account: 'a' });
    expect(rules.store.inMemory()).toBeLessThanOrEqual(3 * 1024 * 1024);
    expect(filesUnder(root).length).toBeGreaterThanOrEqual(2);
    for (const [i, name] of ['a', 'b', 'c'].entries()) {
      const file = refs.files[i]!;
      expect([file.size, file.contentType]).toEqual([2 * 1024 * 1024, 'image/png']);
      const bytes = Buffer.from(await (await file.blob()).arrayBuffer());
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(expectedDigest(name, 2).sha256);
    }
    await refs.release();
    expect(filesUnder(root)).toEqual([]);
    expect(rules.store.inMemory()).toBe(0);
  });

  it('a failed fetch gives back what it held', async () => {
    const root = spoolRoot();
    const rules = limits({ store: new ReferenceStore(1024 * 1024, root) });
    const err = await fetchReferences([['image_urls[0]', `${images.url}/a?mb=2`], ['image_urls[1]', `${images.url}/b?mb=21`]], rules, { account: 'a' }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('image_urls[1] could not be used: over 20 MB');
    expect(filesUnder(root)).toEqual([]);
    expect(rules.store.inMemory()).toBe(0);
  });

  it('spool directories of processes that are gone are removed when a process starts; a live one is kept', async () => {
    const root = spoolRoot();
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    fs.mkdirSync(path.join(root, `${gone}-dead`));
    fs.writeFileSync(path.join(root, `${gone}-dead`, 'ref-1'), 'x');
    fs.mkdirSync(path.join(root, `${process.ppid}-live`));
    new ReferenceStore(0, root);
    expect(fs.readdirSync(root)).toEqual([`${process.ppid}-live`]);
  });
});

describe('download slots', () => {
  it("an account over its share waits (ReferencesBusy) while another account's download goes ahead; a data URL needs no slot", async () => {
    const rules = limits({ slots: new DownloadSlots(4, 1), timeoutMs: 1500 });
    const first = fetchReferences([['image_urls[0]', `${trickle.url}/slow.png`]], rules, { account: 'a' }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    const busy = await fetchReferences([['image_urls[0]', `${images.url}/x?mb=1`]], rules, { account: 'a' }).catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(ReferencesBusy);
    expect((busy as ReferencesBusy).waitMs).toBe(1000);
    const png = Buffer.from('89504e470d0a1a0a00000000', 'hex').toString('base64');
    const inline = await fetchReferences([['image_urls[0]', `data:image/png;base64,${png}`]], rules, { account: 'a' });
    await inline.release();
    const other = await fetchReferences([['image_urls[0]', `${images.url}/x?mb=1`]], rules, { account: 'b' });
    expect(other.files[0]!.size).toBe(1024 * 1024);
    await other.release();
    expect(await first).toBeInstanceOf(UpstreamRejected);
    // Its slot came back when it ended.
    const again = await fetchReferences([['image_urls[0]', `${images.url}/x?mb=1`]], rules, { account: 'a' });
    await again.release();
  });
});

describe('a spool that cannot be written', () => {
  it('fails the task naming the error code, never our paths', async () => {
    const root = spoolRoot();
    const blocked = path.join(root, 'not-a-dir');
    fs.writeFileSync(blocked, 'x');
    const rules = limits({ store: new ReferenceStore(0, blocked) });
    const err = await fetchReferences([['image_urls[0]', `${images.url}/a?mb=1`]], rules, { account: 'a' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamRejected);
    expect((err as Error).message).toMatch(/^image_urls\[0\] could not be used: the gateway could not spool it to disk \(E[A-Z]+\)$/);
    expect((err as Error).message).not.toContain(root);
  });
});
