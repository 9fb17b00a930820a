import type { AppContext } from '../../context.ts';
import type { KeyStatus } from '../../core/key.ts';
import type { ApiKey, User } from '../../db/types.ts';
import { badRequest, forbidden, notFound } from '../../core/errors.ts';
import { newId } from '../../lib/ids.ts';
import { toBalance, toCredits } from '../../lib/money.ts';
import { adjustKeyQuota, topUp } from '../billing/ledger.ts';
import { credited, units } from './amounts.ts';
import { getUser, insertUser, listUsers, updateAlert } from './accounts.repo.ts';
import type { Pending } from '../text-money/index.ts';
import { acceptAlertUrl } from '../webhooks/balance-alerts.ts';
import { generateKeySecret } from './key-secret.ts';
import { assertWithinCeiling, ceilingColumn, ceilingOfRow, disabledByOperator, normalizePolicy, NO_POLICY, policyColumns, policyOfRow, type KeyPolicy } from './key-policy.ts';
import { getKey, insertKey, listKeys, lockKey, updateKey, updateKeySettings } from './keys.repo.ts';

type Ctx = Pick<AppContext, 'db' | 'config' | 'keyCache' | 'quotas' | 'textMoney'>;

// The views add back what text money holds and has not spent (ctx.textMoney.pendingFor), as the
// balance routes do: the numbers say what calls cost.
const NOTHING_PENDING: Pending = { unspent: 0, limited: 0 };

export function userView(ctx: Ctx, user: User, held: Pending = NOTHING_PENDING) {
  const balance = user.balance + held.unspent;
  const used = user.used - held.unspent;
  return {
    id: user.id,
    name: user.name,
    status: user.status,
    balance: toBalance(balance, ctx.config),
    balance_credits: toCredits(balance, ctx.config),
    used: toBalance(used, ctx.config),
    used_credits: toCredits(used, ctx.config),
    alert_below: user.alert_below === null ? null : toBalance(Number(user.alert_below), ctx.config),
    alert_url: user.alert_url,
    group: user.group_name,
    created_at: Math.floor(user.created_at / 1000),
  };
}

export interface AlertSettings {
  /** In the balance unit; null turns the alert off. */
  alert_below?: number | null;
  alert_url?: string | null;
}

/** Sets an account's low-balance alert; a change re-arms it (webhooks/balance-alerts.ts). */
export async function setAlert(ctx: Ctx & Pick<AppContext, 'resolve'>, userId: string, input: AlertSettings) {
  if (!(await getUser(ctx.db, userId))) throw notFound(`No user ${userId}`);
  const below = input.alert_below === undefined || input.alert_below === null ? input.alert_below : units(ctx, 'alert_below', input.alert_below);
  const url = input.alert_url ? await acceptAlertUrl(ctx, input.alert_url) : input.alert_url === '' ? null : input.alert_url;
  await updateAlert(ctx.db, userId, { alert_below: below, alert_url: url });
  return (await userViews(ctx, [(await getUser(ctx.db, userId))!]))[0]!;
}

export function keyView(ctx: Ctx, key: ApiKey, held: Pending = NOTHING_PENDING) {
  return {
    id: key.id,
    user_id: key.user_id,
    name: key.name,
    prefix: key.key_prefix,
    status: key.status,
    unlimited: key.unlimited === 1,
    quota: key.unlimited === 1 ? null : toBalance(key.quota_remain + held.limited, ctx.config),
    quota_used: toBalance(key.quota_used - held.unspent, ctx.config),
    rate_limit_rpm: key.rate_limit_rpm,
    log_bodies: key.log_bodies === 1,
    ...policyOfRow(key),
    operator_policy: ceilingOfRow(key),
    created_at: Math.floor(key.created_at / 1000),
  };
}

/** Who writes a key: the operator sets its policy (and so the ceiling); an account holder only narrows it. */
export type KeyWriter = 'operator' | 'account';

const policyFields = (input: Partial<KeyPolicy>) => input.models !== undefined || input.allowed_ips !== undefined || input.expires_at !== undefined;

export { units } from './amounts.ts';

export async function createUser(ctx: Ctx, input: { name: string; balance?: number }) {
  const id = newId('usr');
  const amount = units(ctx, 'balance', input.balance ?? 0);
  await ctx.db.transaction().execute(async (trx) => {
    await insertUser(trx, { id, name: input.name, now: Date.now() });
    if (amount > 0) await topUp(trx, { userId: id, amount, note: 'initial balance' });
  });
  return userView(ctx, (await getUser(ctx.db, id))!);
}

export async function topUpUser(ctx: Ctx, userId: string, amount: number, note?: string) {
  const value = units(ctx, 'amount', amount);
  if (value === 0) throw badRequest('amount must be greater than 0');
  if (!(await getUser(ctx.db, userId))) throw notFound(`No user ${userId}`);
  await credited(ctx, 'amount', () => ctx.db.transaction().execute((trx) => topUp(trx, { userId, amount: value, note: note ?? 'top-up' })));
  return (await userViews(ctx, [(await getUser(ctx.db, userId))!]))[0]!;
}

/** The account's view, as the admin API shows it. */
export async function findUser(ctx: Ctx, userId: string) {
  const user = await getUser(ctx.db, userId);
  if (!user) throw notFound(`No user ${userId}`);
  return (await userViews(ctx, [user]))[0]!;
}

async function userViews(ctx: Ctx, users: User[]) {
  const held = await ctx.textMoney.pendingFor({ accountIds: users.map((u) => u.id) });
  return users.map((u) => userView(ctx, u, held.get(u.id)));
}

async function keyViews(ctx: Ctx, keys: ApiKey[]) {
  const held = await ctx.textMoney.pendingFor({ keyIds: keys.map((k) => k.id) });
  return keys.map((k) => keyView(ctx, k, held.get(k.id)));
}

export async function findUsers(ctx: Ctx, limit: number, after?: string) {
  return userViews(ctx, await listUsers(ctx.db, limit, after));
}

export interface NewKeyInput extends Partial<KeyPolicy> {
  user_id: string;
  name?: string;
  quota?: number;
  unlimited?: boolean;
  rate_limit_rpm?: number | null;
  /** Store the request and answer of the key's calls with the call log. */
  log_bodies?: boolean;
}

export async function createKey(ctx: Ctx, input: NewKeyInput, by: KeyWriter = 'operator') {
  if (input.unlimited && input.quota !== undefined) throw badRequest('quota and unlimited: true cannot be sent together');
  if (!input.unlimited && input.quota === undefined) throw badRequest('send either quota or unlimited: true');
  if (!(await getUser(ctx.db, input.user_id))) throw badRequest(`user_id: no user ${input.user_id}`);
  // RATE_LIMIT_RPM is the operator's limit on every key: an account holder may only narrow it for their own.
  if (by === 'account' && input.rate_limit_rpm != null && input.rate_limit_rpm > ctx.config.rateLimitRpm) {
    throw forbidden(`rate_limit_rpm: the operator allows at most ${ctx.config.rateLimitRpm} requests a minute per key`);
  }
  const quota = input.unlimited ? 0 : units(ctx, 'quota', input.quota!);
  const policy = normalizePolicy(input, NO_POLICY);
  const secret = generateKeySecret();
  const id = newId('key');
  const now = Date.now();
  await credited(ctx, 'quota', () => ctx.db.transaction().execute(async (trx) => {
    await insertKey(trx, {
      id,
      user_id: input.user_id,
      name: input.name ?? 'default',
      key_hash: secret.hash,
      key_prefix: secret.displayPrefix,
      status: 'active',
      unlimited: input.unlimited ? 1 : 0,
      quota_remain: 0,
      quota_used: 0,
      rate_limit_rpm: input.rate_limit_rpm ?? null,
      log_bodies: input.log_bodies ? 1 : 0,
      created_at: now,
      updated_at: now,
      deleted_at: null,
      ...policyColumns(policy),
      policy_ceiling: by === 'operator' && policyFields(input) ? JSON.stringify(policy) : null,
    });
    if (quota > 0) await adjustKeyQuota(trx, { userId: input.user_id, keyId: id, delta: quota, amount: 0, note: 'initial quota' });
  }));
  return { ...keyView(ctx, (await getKey(ctx.db, id))!), key: secret.plaintext };
}

async function existingKey(ctx: Ctx, id: string): Promise<ApiKey> {
  const key = await getKey(ctx.db, id);
  if (!key || key.status === 'deleted') throw notFound(`No key ${id}`);
  return key;
}

export interface KeyChanges extends Partial<KeyPolicy> {
  name?: string;
  status?: Exclude<KeyStatus, 'deleted'>;
  rate_limit_rpm?: number | null;
  log_bodies?: boolean;
  /** New remaining quota of a limited key, in the balance unit. */
  quota?: number;
}

export async function changeKey(ctx: Ctx, id: string, changes: KeyChanges, by: KeyWriter = 'operator') {
  // Deleting also sets deleted_at (deleteKey): a status alone would leave the key half deleted.
  if (changes.status !== undefined && !['active', 'disabled'].includes(changes.status)) throw badRequest('status must be active or disabled');
  const target = changes.quota === undefined ? undefined : units(ctx, 'quota', changes.quota);
  // This process's calls' spends still queued would land after the drain below as overruns of the new quota.
  if (target !== undefined) await ctx.textMoney.flush();
  const key = await credited(ctx, 'quota', () => ctx.db.transaction().execute(async (trx) => {
    // Read under the row lock: a key read before it may have paid for submits since, and a change
    // worked out from that read would be a debit it can no longer pay.
    // A quota set binds from now: the key's floats give back what they hold first (before the key's
    // row is locked, in the order a float's close locks them).
    if (target !== undefined) await ctx.textMoney.drainKey(trx, id);
    const locked = await lockKey(trx, id);
    if (!locked || locked.status === 'deleted') throw notFound(`No key ${id}`);
    if (target !== undefined) {
      if (locked.unlimited === 1) throw badRequest('quota: this key is unlimited');
      // The quota shown is what open holds have not spent plus the column: set that, and let the
      // column go no lower than 0 (a hold bigger than the new quota gives its rest back on top).
      const held = (await ctx.textMoney.pendingFor({ keyIds: [id] }, trx)).get(id)?.limited ?? 0;
      const delta = Math.max(target - (locked.quota_remain + held), -locked.quota_remain);
      if (delta !== 0) await adjustKeyQuota(trx, { userId: locked.user_id, keyId: id, delta, amount: 0, note: 'quota set' });
    }
    if (by === 'account' && changes.status === 'active' && disabledByOperator(locked)) {
      throw forbidden('status: the operator disabled this key; only the operator can enable it again');
    }
    const logBodies = changes.log_bodies === undefined ? undefined : changes.log_bodies ? 1 : 0;
    const settings = { name: changes.name, status: changes.status, rate_limit_rpm: changes.rate_limit_rpm, log_bodies: logBodies };
    let ceilingPolicy = ceilingOfRow(locked);
    let columns = {};
    if (policyFields(changes)) {
      const policy = normalizePolicy(changes, policyOfRow(locked));
      if (by === 'account') assertWithinCeiling(policy, ceilingPolicy);
      else ceilingPolicy = policy;
      columns = policyColumns(policy);
    }
    // What the operator sets is the ceiling, the key's status included.
    const disabled = changes.status === undefined ? disabledByOperator(locked) : changes.status === 'disabled';
    const ceiling = by === 'operator' ? { policy_ceiling: ceilingColumn(ceilingPolicy, disabled) } : {};
    await updateKeySettings(trx, id, { ...settings, ...columns, ...ceiling });
    // Read before the commit: the answer is the key as this change left it, whatever spends next.
    const changed = (await getKey(trx, id))!;
    return { hash: changed.key_hash, view: keyView(ctx, changed, (await ctx.textMoney.pendingFor({ keyIds: [id] }, trx)).get(id)) };
  }));
  await ctx.keyCache.announce(key.hash, id);
  ctx.textMoney.keyChanged(id);
  ctx.quotas.changed([id]);
  return key.view;
}

export async function deleteKey(ctx: Ctx, id: string) {
  const key = await existingKey(ctx, id);
  await updateKey(ctx.db, id, { status: 'deleted', deleted_at: Date.now() });
  await ctx.keyCache.announce(key.key_hash, id);
  ctx.quotas.changed([id]);
  return { id, deleted: true };
}

export async function findKeys(ctx: Ctx, userId: string) {
  return keyViews(ctx, await listKeys(ctx.db, userId));
}
