import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { claimMeta } from '../../db/meta.ts';
import { setCredentials } from '../console/console.service.ts';
import { countUsers } from './accounts.repo.ts';
import { createKey, createUser } from './accounts.service.ts';

const DEMO_BALANCE_USD = 10;

/**
 * On the first start of an empty database, make an account and key so a newcomer can curl at once.
 * The meta row makes the claim atomic when several processes start together.
 */
export const DEMO_CONSOLE_EMAIL = 'demo@example.com';

export interface DemoAccount {
  key: string;
  userId: string;
  consoleEmail: string;
  consolePassword: string;
}

export async function ensureDemoAccount(ctx: AppContext): Promise<DemoAccount | undefined> {
  if (!ctx.config.demo) return undefined;
  if ((await countUsers(ctx.db)) > 0) return undefined;
  if (!(await claimMeta(ctx.db, 'demo_account', String(Date.now())))) return undefined;
  const balance = ctx.config.billingUnit === 'usd' ? DEMO_BALANCE_USD : DEMO_BALANCE_USD * ctx.config.creditsPerUsd;
  const user = await createUser(ctx, { name: 'demo', balance });
  const key = await createKey(ctx, { user_id: user.id, name: 'demo', unlimited: true });
  const consolePassword = randomBytes(12).toString('base64url');
  await setCredentials(ctx, user.id, { email: DEMO_CONSOLE_EMAIL, password: consolePassword });
  return { key: key.key, userId: user.id, consoleEmail: DEMO_CONSOLE_EMAIL, consolePassword };
}
