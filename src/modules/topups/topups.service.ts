import type { AppContext } from '../../context.ts';
import type { TopupsConfig } from '../../config.ts';
import type { Topup } from '../../db/types.ts';
import { badGateway, notFound } from '../../core/errors.ts';
import { newId } from '../../lib/ids.ts';
import { MAX_BALANCE_UNITS, toBalance } from '../../lib/money.ts';
import { getUser } from '../accounts/accounts.repo.ts';
import { aboveMaximum } from '../accounts/amounts.ts';
import { stripeFor } from './stripe-client.ts';
import { priceOf } from './topup-money.ts';
import { unitsPerMinor } from '../../lib/minor-units.ts';
import { insertTopup, listTopups, setSession, startFailed } from './topups.repo.ts';

// Starting a top-up and reading them back. The row is written before Stripe is asked, so a session
// always finds its top-up; the balance moves only when Stripe's signed event says it was paid
// (stripe-events.ts).

type Ctx = Pick<AppContext, 'db' | 'config' | 'logger'>;

const PAGE = 50;
const MAX_PAGE = 500;
const seconds = (ms: number | null) => (ms === null ? null : Math.floor(Number(ms) / 1000));

/** The top-up settings, or a 404 that says they are off. */
export function topupsOn(ctx: Pick<AppContext, 'config'>): TopupsConfig {
  if (!ctx.config.topups) throw notFound('Top-ups with Stripe are not enabled on this gateway (STRIPE_SECRET_KEY is unset)');
  return ctx.config.topups;
}

/** What the console shows of the settings: null when top-ups are off. */
export const topupSettings = (ctx: Pick<AppContext, 'config'>) =>
  ctx.config.topups ? { min: ctx.config.topups.min, max: ctx.config.topups.max, currency: ctx.config.topups.currency } : null;

export function topupView(ctx: Pick<AppContext, 'config'>, row: Topup) {
  return {
    id: row.id,
    user_id: row.user_id,
    amount: toBalance(Number(row.amount), ctx.config),
    price: { amount: (Number(row.price) * unitsPerMinor(row.currency)) / 1_000_000, currency: row.currency },
    status: row.status,
    refunded: toBalance(Number(row.refunded), ctx.config),
    disputed: toBalance(Number(row.disputed), ctx.config),
    created_at: seconds(row.created_at)!,
    paid_at: seconds(row.paid_at),
    updated_at: seconds(row.updated_at)!,
  };
}

/** The console's own page, where Stripe sends the browser back (the hash routes the page). */
const consolePage = (ctx: Ctx, query: string) => `${ctx.config.publicBaseUrl}/console/?${query}#/topups`;

/** A Checkout Session for `amount` (balance unit, as the ledger rounds it): the browser is sent to its URL to pay. */
export async function startTopup(ctx: Ctx, userId: string, amount: number) {
  const topups = topupsOn(ctx);
  const price = priceOf(ctx.config, topups, amount);
  // Refused before anyone pays: once paid, a credit above the maximum could only wait (stripe-events.ts).
  const user = await getUser(ctx.db, userId);
  if (user && Number(user.balance) > MAX_BALANCE_UNITS - price.units) throw aboveMaximum(ctx, 'amount', 'balance');
  const id = newId('topup');
  const now = Date.now();
  await insertTopup(ctx.db, { id, user_id: userId, amount: price.units, price: price.minor, currency: topups.currency, status: 'pending', session_id: null, payment_intent: null, created_at: now, updated_at: now, paid_at: null });
  const metadata = { topup_id: id, user_id: userId };
  let session;
  try {
    session = await (await stripeFor(topups)).checkout.sessions.create({
      mode: 'payment',
      line_items: [{ quantity: 1, price_data: { currency: topups.currency, unit_amount: price.minor, product_data: { name: `Balance top-up: ${toBalance(price.units, ctx.config)} ${ctx.config.billingUnit === 'usd' ? 'USD' : 'credits'}` } } }],
      client_reference_id: userId,
      metadata,
      payment_intent_data: { metadata },
      success_url: consolePage(ctx, `topup=${id}&checkout={CHECKOUT_SESSION_ID}`),
      cancel_url: consolePage(ctx, `topup=${id}&cancelled=1`),
    });
  } catch (err) {
    // No session, so nothing can be charged: the row is listed as failed.
    await startFailed(ctx.db, id, Date.now());
    ctx.logger.warn({ err, topup: id }, 'Stripe refused or failed to create a Checkout Session');
    throw badGateway('Stripe could not start the checkout: try again later');
  }
  if (!session.url) throw badGateway('Stripe answered a Checkout Session without a URL');
  await setSession(ctx.db, id, session.id, Date.now());
  return { id, checkout_url: session.url };
}

export async function findTopups(ctx: Ctx, query: { userId?: string; after?: string; limit?: string }) {
  const limit = Math.min(Math.max(Number(query.limit ?? PAGE) || PAGE, 1), MAX_PAGE);
  const rows = await listTopups(ctx.db, { ...(query.userId !== undefined ? { userId: query.userId } : {}), ...(query.after !== undefined ? { before: query.after } : {}), limit: limit + 1 });
  const page = rows.slice(0, limit);
  return { data: page.map((row) => topupView(ctx, row)), next: rows.length > limit ? page[page.length - 1]!.id : null };
}
