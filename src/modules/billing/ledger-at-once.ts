import type { Statement } from '../../db/at-once.ts';
import { netsOf, type LedgerOp } from './ledger-plan.ts';

// SQLite's fast path for a batch of ledger movements (db/at-once.ts): each account and key changes
// once by the batch's net (ledger-plan.ts), and the UPDATE's condition (what the payer's debits but
// overruns take leaves it at zero or more) refuses the whole batch when any payer is short; the
// caller then takes the careful path
// (ledger-batch.ts), which decides movement by movement. The same ledger rows are written.

const ACCOUNT = 'update users set balance = balance - ?, used = used + ?, updated_at = ? where id = ? and (? is null or balance - ? >= 0)';
const KEY = 'update api_keys set quota_used = quota_used + ?, quota_remain = quota_remain - ? where id = ? and (? is null or quota_remain - ? >= 0)';
const LEDGER =
  'insert into ledger (user_id, key_id, kind, balance_delta, used_delta, key_remain_delta, key_used_delta, ref, note, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

/** Applies every op or throws having changed nothing (inside the caller's transaction). */
export function applyAllAtOnce(statement: Statement, ops: LedgerOp[]): void {
  const now = Date.now();
  const { accounts, keys, rows } = netsOf(ops, now);
  const account = statement(ACCOUNT);
  for (const [id, { net, checked = null }] of accounts) {
    if (account.run(net, net, now, id, checked, checked).changes !== 1) throw new Error(`no account ${id}, or it cannot pay`);
  }
  const key = statement(KEY);
  for (const [id, net] of keys) {
    const checked = net.checked ?? null;
    if (key.run(net.used, net.remain, id, checked, checked).changes !== 1) throw new Error(`no key ${id}, or it cannot pay`);
  }
  const ledger = statement(LEDGER);
  for (const r of rows) ledger.run(r.user_id, r.key_id, r.kind, r.balance_delta, r.used_delta, r.key_remain_delta, r.key_used_delta, r.ref, r.note, r.created_at);
}
