import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';

// Where callers' reference files wait between their download and the upstream call. Every download
// of the process draws on one memory budget; a download that finds no room goes on to a file in this
// process's spool directory, so many large references cost disk, not memory. Files are deleted when
// the call is done with them, the directory when the process exits, and the directories of processes
// that died without exiting at the next start.

/** One reference's bytes, in memory or in a spool file, until release(). */
export interface HeldBytes {
  size: number;
  /** The first bytes, to sniff the type from. */
  head: Buffer;
  /** A Blob over the bytes (file-backed for a spooled one: read as it is sent). */
  blob(type: string): Promise<Blob>;
  stream(): Readable;
  release(): Promise<void>;
}

const HEAD_BYTES = 64;

export class ReferenceStore {
  private used = 0;
  private dir: string | undefined;
  private made = 0;

  constructor(
    readonly memoryBytes: number,
    private readonly spoolRoot: string,
  ) {
    sweepDeadProcesses(spoolRoot);
  }

  /** Bytes held in memory now (all downloads of the process together). */
  inMemory(): number {
    return this.used;
  }

  /** A sink for one download: memory while the budget has room, then a spool file. */
  collector(): Collector {
    return new Collector(this);
  }

  take(bytes: number): boolean {
    if (this.used + bytes > this.memoryBytes) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }

  spoolPath(): string {
    if (!this.dir) {
      const dir = path.join(this.spoolRoot, `${process.pid}-${randomBytes(4).toString('hex')}`);
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      this.dir = dir;
      process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    }
    return path.join(this.dir, `ref-${++this.made}`);
  }
}

/** Removes the spool directories of processes that are gone (named `<pid>-<random>`). */
function sweepDeadProcesses(root: string): void {
  let names: string[] = [];
  try {
    names = fs.readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.split('-')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || alive(pid)) continue;
    // Two processes starting at once may sweep the same directory: the loser's error is no failure.
    try {
      fs.rmSync(path.join(root, name), { recursive: true, force: true });
    } catch {}
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class Collector {
  private chunks: Buffer[] = [];
  private taken = 0;
  private file: FileHandle | undefined;
  private path: string | undefined;
  private head = Buffer.alloc(0);
  size = 0;

  constructor(private readonly store: ReferenceStore) {}

  async write(chunk: Buffer): Promise<void> {
    if (this.head.length < HEAD_BYTES) this.head = Buffer.concat([this.head, chunk.subarray(0, HEAD_BYTES - this.head.length)]);
    this.size += chunk.length;
    if (!this.path && this.store.take(chunk.length)) {
      this.taken += chunk.length;
      this.chunks.push(chunk);
      return;
    }
    try {
      if (!this.path) {
        this.path = this.store.spoolPath();
        this.file = await open(this.path, 'wx', 0o600);
        for (const held of this.chunks) await this.file.write(held);
        this.chunks = [];
        this.store.give(this.taken);
        this.taken = 0;
      }
      await this.file!.write(chunk);
    } catch (err) {
      // Named by its code only: the message of a file error carries our paths.
      throw new Error(`the gateway could not spool it to disk (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }

  /** The collected bytes; the collector is spent. */
  async finish(): Promise<HeldBytes> {
    await this.file?.close();
    this.file = undefined;
    const { size, head, store } = this;
    if (this.path) {
      const file = this.path;
      this.path = undefined;
      return {
        size,
        head,
        blob: (type) => fs.openAsBlob(file, { type }),
        stream: () => fs.createReadStream(file),
        release: () => rm(file, { force: true }),
      };
    }
    // Kept as the chunks that came: a Blob copies them once, while it is sent, within the budget's bound.
    const chunks = this.chunks.map((c) => new Uint8Array(c.buffer as ArrayBuffer, c.byteOffset, c.length));
    let taken = this.taken;
    this.chunks = [];
    this.taken = 0;
    return {
      size,
      head,
      blob: async (type) => new Blob(chunks, { type }),
      stream: () => Readable.from(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.length))),
      release: async () => {
        store.give(taken);
        taken = 0;
      },
    };
  }

  /** Drops what was collected (a failed download). */
  async discard(): Promise<void> {
    await this.file?.close().catch(() => {});
    if (this.path) await rm(this.path, { force: true });
    this.store.give(this.taken);
    this.taken = 0;
    this.chunks = [];
    this.path = undefined;
  }
}
