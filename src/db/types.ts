import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

// Timestamps are Unix milliseconds and money is integer ledger units (1 USD = 1,000,000) on both
// dialects, so the same arithmetic and comparisons work everywhere.

export interface UsersTable {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  balance: number;
  used: number;
  created_at: number;
  updated_at: number;
}

export type KeyStatus = 'active' | 'disabled' | 'deleted';

export interface ApiKeysTable {
  id: string;
  user_id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  status: KeyStatus;
  unlimited: number;
  quota_remain: number;
  quota_used: number;
  rate_limit_rpm: number | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export type LedgerKind = 'topup' | 'adjustment' | 'key_quota' | 'hold' | 'settle' | 'refund' | 'charge';

export interface LedgerTable {
  id: Generated<number>;
  user_id: string;
  key_id: string | null;
  kind: LedgerKind;
  balance_delta: number;
  used_delta: number;
  key_remain_delta: number;
  key_used_delta: number;
  ref: string | null;
  note: string | null;
  created_at: number;
}

export interface MetaTable {
  name: string;
  value: string;
}

export interface Database {
  users: UsersTable;
  api_keys: ApiKeysTable;
  ledger: LedgerTable;
  meta: MetaTable;
}

export type User = Selectable<UsersTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type NewApiKey = Insertable<ApiKeysTable>;
export type ApiKeyUpdate = Updateable<ApiKeysTable>;
export type LedgerRow = Selectable<LedgerTable>;
