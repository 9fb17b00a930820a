import type { AppContext } from '../../context.ts';
import type { RedeemCode } from '../../db/types.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { newId } from '../../lib/ids.ts';
import { toBalance } from '../../lib/money.ts';
import { units } from '../accounts/accounts.service.ts';
import { codeHash, newCode } from './code-secret.ts';
import { insertCodes, listCodes, revokeCode } from './codes.repo.ts';

// The operator's side of redemption codes: make a batch, list codes with their use, revoke one.
// A code's plain text exists only in the answer that made it.

type Ctx = Pick<AppContext, 'db' | 'config'>;

export interface NewCodesInput {
  amount: number;
  count: number;
  uses?: number;
  /** Unix seconds; null or absent = never. */
  expires_at?: number | null;
  note?: string;
}

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

export function codeView(ctx: Pick<AppContext, 'config'>, code: RedeemCode) {
  return {
    id: code.id,
    batch_id: code.batch_id,
    amount: toBalance(Number(code.amount), ctx.config),
    uses: Number(code.uses),
    redeemed: Number(code.used),
    expires_at: seconds(code.expires_at === null ? null : Number(code.expires_at)),
    revoked_at: seconds(code.revoked_at === null ? null : Number(code.revoked_at)),
    note: code.note,
    created_at: seconds(Number(code.created_at))!,
  };
}

// Rows per INSERT: well inside both dialects' limits on bound parameters.
const CHUNK = 100;

export async function createCodes(ctx: Ctx, input: NewCodesInput) {
  const amount = units(ctx, 'amount', input.amount);
  if (amount === 0) throw badRequest('amount must be greater than 0');
  if (!Number.isInteger(input.count) || input.count < 1 || input.count > 1000) throw badRequest('count must be an integer from 1 to 1000');
  const uses = input.uses ?? 1;
  if (!Number.isInteger(uses) || uses < 1) throw badRequest('uses must be a positive integer');
  const now = Date.now();
  if (input.expires_at != null && input.expires_at * 1000 <= now) throw badRequest('expires_at must be in the future');
  const batchId = newId('cbatch');
  const made = Array.from({ length: input.count }, () => {
    const code = newCode();
    const row: RedeemCode = {
      id: newId('code'),
      batch_id: batchId,
      code_hash: codeHash(code),
      amount,
      uses,
      used: 0,
      expires_at: input.expires_at == null ? null : input.expires_at * 1000,
      revoked_at: null,
      note: input.note ?? null,
      created_at: now,
    };
    return { code, row };
  });
  await ctx.db.transaction().execute(async (trx) => {
    for (let i = 0; i < made.length; i += CHUNK) {
      await insertCodes(trx, made.slice(i, i + CHUNK).map(({ row }) => row));
    }
  });
  return { batch_id: batchId, codes: made.map(({ code, row }) => ({ ...codeView(ctx, row), code })) };
}

export async function findCodes(ctx: Ctx, options: { batchId?: string; before?: string; limit?: number }) {
  const limit = Math.min(Math.max(options.limit ?? 100, 1), 1000);
  return (await listCodes(ctx.db, { ...options, limit })).map((code) => codeView(ctx, code));
}

export async function revoke(ctx: Ctx, id: string) {
  const code = await revokeCode(ctx.db, id, Date.now());
  if (!code) throw notFound(`No code ${id}`);
  return codeView(ctx, code);
}
