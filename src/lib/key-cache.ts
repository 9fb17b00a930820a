import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { CachedKey } from '../core/key.ts';

// Authenticating must not cost a database read per request, yet a key deleted or changed anywhere
// must stop working everywhere within a second. Every process keeps a cache and drops entries when
// (a) it changes a key itself, (b) Redis announces a change, or (c) its poll of api_keys.updated_at
// sees one; (c) alone keeps the promise when there is no Redis.

/** Where the cache reads keys (the accounts module's keyStore): passed in, so the cache knows no table. */
export interface KeyStore {
  /** The key with this hash, its policy compiled; undefined when there is none. */
  find(hash: string): Promise<CachedKey | undefined>;
  /** The keys changed at or after `since` (Unix ms), with when. */
  changedSince(since: number): Promise<{ id: string; key_hash: string; updated_at: number }[]>;
}

const TTL_MS = 60_000;
// Re-read a little of the past on every poll, in case a writer's clock is slightly behind ours.
const CLOCK_SLACK_MS = 2_000;

export class KeyCache {
  private entries = new Map<string, { key: CachedKey; at: number }>();
  private cursor = Date.now();
  private timer?: NodeJS.Timeout;
  private polling = false;
  private readonly listeners: ((keyId: string) => void)[] = [];
  /** Names this cache in its announcements. */
  private readonly self = randomBytes(6).toString('hex');

  constructor(
    private readonly store: KeyStore,
    private readonly pollMs: number,
    private readonly publisher: Redis | undefined,
    /** REDIS_PREFIX: gateways sharing one Redis keep apart by it. */
    private readonly channel: string,
  ) {}

  /** The cached entry, without touching the database (the hot path needs no promise for a hit). */
  cached(hash: string): CachedKey | undefined {
    const hit = this.entries.get(hash);
    return hit && Date.now() - hit.at < TTL_MS ? hit.key : undefined;
  }

  async lookup(hash: string): Promise<CachedKey | undefined> {
    const hit = this.cached(hash);
    if (hit) return hit;
    const key = await this.store.find(hash);
    if (!key) return undefined;
    this.entries.set(hash, { key, at: Date.now() });
    return key;
  }

  drop(hash: string): void {
    this.entries.delete(hash);
  }

  /** Called with the id of each key another process changed (text money's floats stop taking its calls). */
  onChanged(listener: (keyId: string) => void): void {
    this.listeners.push(listener);
  }

  private changedElsewhere(hash: string, keyId: string | undefined): void {
    const id = keyId || this.entries.get(hash)?.key.id;
    this.drop(hash);
    if (id) for (const listener of this.listeners) listener(id);
  }

  /** Called after a key change is committed: forget it here and tell the other processes. */
  async announce(hash: string, keyId = ''): Promise<void> {
    this.drop(hash);
    // Tagged with this cache, which hears its own announcement too and has dropped the key already.
    if (this.publisher) await this.publisher.publish(this.channel, `${this.self} ${hash} ${keyId}`);
  }

  /** Listens for changes made by other processes. */
  async start(subscriber?: Redis): Promise<void> {
    if (subscriber) {
      await subscriber.subscribe(this.channel);
      subscriber.on('message', (channel, message: string) => {
        if (channel !== this.channel) return;
        const [from, hash, keyId] = message.includes(' ') ? message.split(' ') : [undefined, message];
        if (from !== this.self && hash) this.changedElsewhere(hash, keyId);
      });
    }
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    if (this.entries.size === 0) {
      // Nothing cached: whatever changed until now will be read fresh anyway.
      this.cursor = Date.now();
      return;
    }
    this.polling = true;
    try {
      const changed = await this.store.changedSince(this.cursor - CLOCK_SLACK_MS);
      for (const row of changed) {
        this.changedElsewhere(row.key_hash, row.id);
        this.cursor = Math.max(this.cursor, row.updated_at);
      }
    } catch {
      // The database is briefly unreachable: drop everything rather than trust stale entries.
      this.entries.clear();
    } finally {
      this.polling = false;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
