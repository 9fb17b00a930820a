import type { BlockList } from 'node:net';

// An API key as every call sees it once authenticated: the guard checks it, the services charge it.
// The key cache (lib/key-cache.ts) holds these; the accounts module reads and compiles them.

/** A deleted key still answers the balance routes; a disabled one answers nothing. */
export type KeyStatus = 'active' | 'disabled' | 'deleted';

/** A key's policy as the key guard checks it on every call; undefined parts are no limit. */
export interface CompiledPolicy {
  models?: Set<string>;
  addresses?: BlockList;
  expiresAtMs?: number;
}

export interface CachedKey {
  id: string;
  user_id: string;
  /** SHA-256 of the key, hex: what the cache is indexed by. */
  key_hash: string;
  status: KeyStatus;
  /** 1 when the key spends the account's balance with no quota of its own. */
  unlimited: number;
  rate_limit_rpm: number | null;
  /** The request and answer of this key's calls are stored for the call log (modules/calls/call-bodies.ts). */
  log_bodies: boolean;
  /** The account's customer group: the prices its calls pay and the models they may use. */
  group: string;
  /** The operator disabled the key's account (PATCH /admin/users/:id): none of its keys answers. */
  accountDisabled: boolean;
  /** key_hash as bytes, for the constant-time comparison on every request. */
  hashBytes: Buffer;
  /** Models, addresses, expiry (accounts/key-policy.ts), compiled once per cache entry; undefined = none. */
  policy?: CompiledPolicy;
}
