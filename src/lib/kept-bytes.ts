/**
 * The bytes a stream forwarded, kept for as long as it runs: read again only when it ends without
 * its upstream's usage (the text service then bills our count of what was produced). They are
 * copied into slabs shared by every stream of the process and given back at the stream's end. A
 * stream that kept its views of the socket reads instead (or copies of its own) held them past the
 * young generation, and their garbage collection cost a forwarded messages stream ~20% of its CPU
 * (bench/README.md).
 */
const SLAB = 16 * 1024;
/** Slabs kept for reuse beyond that are left to the garbage collector (8 MiB). */
const MAX_FREE = 512;
const free: Buffer[] = [];

export class KeptBytes {
  private slabs: Buffer[] = [];
  /** Bytes used in the last slab. */
  private used = SLAB;
  private released = false;
  private result: { value: unknown } | undefined;

  push(parts: readonly Buffer[]): void {
    if (this.released) return;
    for (const part of parts) {
      for (let from = 0; from < part.length; ) {
        if (this.used === SLAB) {
          this.slabs.push(free.pop() ?? Buffer.allocUnsafeSlow(SLAB));
          this.used = 0;
        }
        const copied = part.copy(this.slabs.at(-1)!, this.used, from);
        this.used += copied;
        from += copied;
      }
    }
  }

  /** What `read` makes of everything kept (in one buffer), read once: then the slabs are given back. */
  readOnce<T>(read: (bytes: Buffer) => T): T {
    if (!this.result) {
      if (this.released) throw new Error('kept bytes read after they were given back');
      const last = this.slabs.length - 1;
      const bytes = Buffer.concat(this.slabs.map((slab, i) => (i === last ? slab.subarray(0, this.used) : slab)));
      this.result = { value: read(bytes) };
      this.release();
    }
    return this.result.value as T;
  }

  /** Gives the slabs back (a stream that ended with its usage: nothing will be read). */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const slab of this.slabs) if (free.length < MAX_FREE) free.push(slab);
    this.slabs = [];
  }
}
