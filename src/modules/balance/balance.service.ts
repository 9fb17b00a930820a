import type { AppContext } from '../../context.ts';
import { toBalance, toCredits } from '../../lib/money.ts';
import { readUserQuota, readUserUsedQuota } from '../accounts/accounts.repo.ts';
import type { KeyBalance, UserBalance } from './balance.schemas.ts';

type Ctx = Pick<AppContext, 'db' | 'config' | 'logger' | 'quotas' | 'textMoney'>;

export const MESSAGES = {
  keyNotFound: 'API key record not found',
  keyDeleted: 'API key has been deleted',
  userQuotaFailed: 'Failed to read the account balance',
  usedQuotaFailed: 'Failed to read the account used quota',
} as const;

// Served from the quota snapshot, which every commit that moves this key's money drops. Text
// settlements queued in this process are written first, so a caller reads its own calls' charges.
export async function keyBalance(ctx: Ctx, keyId: string): Promise<KeyBalance> {
  await ctx.textMoney.flush();
  const key = await ctx.quotas.get(keyId);
  if (!key) return { success: false, message: MESSAGES.keyNotFound };
  if (key.status === 'deleted') return { success: false, message: MESSAGES.keyDeleted };
  const used = { used_balance: toBalance(key.quota_used, ctx.config), used_credits: toCredits(key.quota_used, ctx.config) };
  if (key.unlimited === 1) return { success: true, remain_balance: -1, remain_credits: -1, ...used, unlimited_quota: true };
  return {
    success: true,
    remain_balance: toBalance(key.quota_remain, ctx.config),
    remain_credits: toCredits(key.quota_remain, ctx.config),
    ...used,
    unlimited_quota: false,
  };
}

async function attempt<T>(ctx: Ctx, what: string, read: () => Promise<T | undefined>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    ctx.logger.error({ err }, `${what} read failed`);
    return undefined;
  }
}

export async function userBalance(ctx: Ctx, userId: string): Promise<UserBalance> {
  await ctx.textMoney.flush();
  const remain = await attempt(ctx, 'user quota', () => readUserQuota(ctx.db, userId));
  if (remain === undefined) return { success: false, message: MESSAGES.userQuotaFailed };
  const used = await attempt(ctx, 'used quota', () => readUserUsedQuota(ctx.db, userId));
  if (used === undefined) return { success: false, message: MESSAGES.usedQuotaFailed };
  return {
    success: true,
    remain_balance: toBalance(remain, ctx.config),
    remain_credits: toCredits(remain, ctx.config),
    used_balance: toBalance(used, ctx.config),
    used_credits: toCredits(used, ctx.config),
  };
}
