import { compiledStatement, rowInserter } from '../../db/prepared.ts';

// The balance UPDATEs every ledger movement is made of, compiled once (they run for every paid
// request). Only ledger.ts and ledger-batch.ts may use them: they write no ledger row themselves.
// The debits are conditional: the WHERE refuses to take more than is there.

export const takeFromAccount = compiledStatement((db) =>
  db
    .updateTable('users')
    .set((eb) => ({ balance: eb('balance', '-', 0), used: eb('used', '+', 0), updated_at: 0 }))
    .where('id', '=', '')
    .where('balance', '>=', 0),
);

/** Unconditional: an overrun is taken even when it leaves the balance below zero. */
export const takeFromAccountAnyway = compiledStatement((db) =>
  db
    .updateTable('users')
    .set((eb) => ({ balance: eb('balance', '-', 0), used: eb('used', '+', 0), updated_at: 0 }))
    .where('id', '=', ''),
);

/** Unconditional, as takeFromAccountAnyway. */
export const takeFromLimitedKeyAnyway = compiledStatement((db) =>
  db
    .updateTable('api_keys')
    .set((eb) => ({ quota_used: eb('quota_used', '+', 0), quota_remain: eb('quota_remain', '-', 0) }))
    .where('id', '=', ''),
);

export const giveBackToAccount = compiledStatement((db) =>
  db
    .updateTable('users')
    .set((eb) => ({ balance: eb('balance', '+', 0), used: eb('used', '-', 0), updated_at: 0 }))
    .where('id', '=', ''),
);

export const takeFromLimitedKey = compiledStatement((db) =>
  db
    .updateTable('api_keys')
    .set((eb) => ({ quota_used: eb('quota_used', '+', 0), quota_remain: eb('quota_remain', '-', 0) }))
    .where('id', '=', '')
    .where('quota_remain', '>=', 0),
);

export const countOnKey = compiledStatement((db) =>
  db
    .updateTable('api_keys')
    .set((eb) => ({ quota_used: eb('quota_used', '+', 0) }))
    .where('id', '=', ''),
);

export const returnToLimitedKey = compiledStatement((db) =>
  db
    .updateTable('api_keys')
    .set((eb) => ({ quota_used: eb('quota_used', '-', 0), quota_remain: eb('quota_remain', '+', 0) }))
    .where('id', '=', ''),
);

export const uncountOnKey = compiledStatement((db) =>
  db
    .updateTable('api_keys')
    .set((eb) => ({ quota_used: eb('quota_used', '-', 0) }))
    .where('id', '=', ''),
);

/** The ledger rows of a batch (one INSERT, precompiled when the batch is a lone movement). */
export const insertLedgerRows = rowInserter('ledger', ['user_id', 'key_id', 'kind', 'balance_delta', 'used_delta', 'key_remain_delta', 'key_used_delta', 'ref', 'note', 'created_at']);
