import type { Kysely } from 'kysely';
import type { Redis } from 'ioredis';
import type { Database } from '../../db/types.ts';
import { getKeyQuota, type KeyQuota } from '../accounts/keys.repo.ts';

// The balance route is the hottest read there is, and a key's quota changes only when money moves.
// So each process keeps a snapshot per key and drops it after every commit that moves the key's
// money: at once in this process, through Redis in the others. A snapshot is also never older than
// MAX_AGE_MS, which keeps processes without Redis within a second, as key changes are.

const MAX_AGE_MS = 1000;

export class QuotaSnapshots {
  private entries = new Map<string, { quota: KeyQuota; at: number }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly publisher: Redis | undefined,
    /** REDIS_PREFIX: gateways sharing one Redis keep apart by it. */
    private readonly channel: string,
  ) {}

  async get(keyId: string): Promise<KeyQuota | undefined> {
    const hit = this.entries.get(keyId);
    if (hit && Date.now() - hit.at < MAX_AGE_MS) return hit.quota;
    const quota = await getKeyQuota(this.db, keyId);
    if (quota) this.entries.set(keyId, { quota, at: Date.now() });
    else this.entries.delete(keyId);
    return quota;
  }

  /** Call after the commit that changed these keys' money, never before it. */
  changed(keyIds: Iterable<string>): void {
    const ids = [...new Set(keyIds)];
    if (ids.length === 0) return;
    for (const id of ids) this.entries.delete(id);
    this.publisher?.publish(this.channel, ids.join(',')).catch(() => undefined);
  }

  async listen(subscriber: Redis): Promise<void> {
    await subscriber.subscribe(this.channel);
    subscriber.on('message', (channel, message: string) => {
      if (channel === this.channel) for (const id of message.split(',')) this.entries.delete(id);
    });
  }
}
