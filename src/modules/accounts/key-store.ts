import type { Kysely } from 'kysely';
import type { CachedKey } from '../../core/key.ts';
import type { Database } from '../../db/types.ts';
import type { KeyStore } from '../../lib/key-cache.ts';
import { compilePolicy, policyOfRow } from './key-policy.ts';
import { findKeyByHash, keysChangedSince } from './keys.repo.ts';

/** The key cache's reads from api_keys: a key as the guard checks it (policy compiled once), and what changed. */
export function keyStore(db: Kysely<Database>): KeyStore {
  return {
    async find(hash) {
      const row = await findKeyByHash(db, hash);
      if (!row) return undefined;
      const key: CachedKey = {
        id: row.id,
        user_id: row.user_id,
        key_hash: row.key_hash,
        status: row.status,
        unlimited: row.unlimited,
        rate_limit_rpm: row.rate_limit_rpm,
        log_bodies: row.log_bodies === 1,
        group: row.group_name,
        accountDisabled: row.account_status !== 'active',
        hashBytes: Buffer.from(row.key_hash, 'hex'),
        policy: compilePolicy(policyOfRow(row)),
      };
      return key;
    },
    changedSince: (since) => keysChangedSince(db, since),
  };
}
