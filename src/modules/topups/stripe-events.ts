import type Stripe from 'stripe';
import type { AppContext } from '../../context.ts';
import type { Topup, TopupStatus } from '../../db/types.ts';
import { serviceUnavailable } from '../../core/errors.ts';
import { AboveMaximum, takeBack, topUp } from '../billing/ledger.ts';
import { stripeFor, stripeSdk } from './stripe-client.ts';
import { shareOf, unitsOf } from './topup-money.ts';
import { topupsOn } from './topups.service.ts';
import { getTopup, markPaid, markUnpaid, moveTakenBack, topupOfPayment } from './topups.repo.ts';

// What a verified Stripe event does to a top-up. Stripe delivers each event at least once, in any
// order, possibly many at once: every change here is a conditional UPDATE of the top-up row and the
// ledger movement it entitles, in one transaction, so a repeated event finds the row moved and
// does nothing. Events that are not about one of our top-ups are acknowledged and ignored.

type Ctx = Pick<AppContext, 'db' | 'logger' | 'config'>;
export type Outcome = 'applied' | 'unchanged' | 'ignored';

const idOf = (value: string | { id: string } | null | undefined) => (value == null ? null : typeof value === 'string' ? value : value.id);

/** Our top-up for the session: its metadata names it, and the row must name the session back. */
async function topupOfSession(ctx: Ctx, session: Stripe.Checkout.Session): Promise<Topup | undefined> {
  const id = session.metadata?.topup_id;
  if (!id) return undefined;
  const topup = await getTopup(ctx.db, id);
  return topup && topup.session_id === session.id ? topup : undefined;
}

async function sessionPaid(ctx: Ctx, session: Stripe.Checkout.Session): Promise<Outcome> {
  const topup = await topupOfSession(ctx, session);
  if (!topup) return 'ignored';
  // completed with payment_status unpaid: a delayed method (bank debit); async_payment_succeeded follows.
  if (session.payment_status !== 'paid') return 'unchanged';
  if (session.amount_total !== Number(topup.price) || session.currency !== topup.currency) {
    // Stripe may charge a converted price in the customer's currency: the session is still ours, for its top-up.
    ctx.logger.warn({ topup: topup.id, session: session.id, amount_total: session.amount_total, currency: session.currency }, 'a Stripe session was paid in another amount or currency than its top-up was priced in');
  }
  const now = Date.now();
  try {
    const credited = await ctx.db.transaction().execute(async (trx) => {
      if (!(await markPaid(trx, topup.id, session.id, idOf(session.payment_intent), now))) return false;
      await topUp(trx, { userId: topup.user_id, amount: Number(topup.amount), ref: topup.id, note: `Stripe top-up ${session.id}` });
      return true;
    });
    return credited ? 'applied' : 'unchanged';
  } catch (err) {
    if (!(err instanceof AboveMaximum)) throw err;
    // Paid, but the balance grew meanwhile to where this credit would pass the maximum: nothing was
    // marked, and the 503 makes Stripe deliver the event again later, when the account has spent.
    ctx.logger.error({ topup: topup.id, session: session.id }, 'a paid Stripe top-up would take the balance above its maximum; waiting for a later delivery');
    throw serviceUnavailable('The balance is at its maximum: this top-up is credited on a later delivery');
  }
}

async function sessionUnpaid(ctx: Ctx, session: Stripe.Checkout.Session, status: 'failed' | 'expired'): Promise<Outcome> {
  const topup = await topupOfSession(ctx, session);
  if (!topup) return 'ignored';
  return (await markUnpaid(ctx.db, topup.id, session.id, status, Date.now())) ? 'applied' : 'unchanged';
}

const TAKEN = new Set<TopupStatus>(['paid', 'partially_refunded', 'refunded', 'disputed']);
const ATTEMPTS = 5;

type Taking = (topup: Topup) => { refunded: number; disputed: number; status: TopupStatus; note: string } | undefined;

/**
 * Takes back what `next` says is due beyond what the top-up already gave back. The totals move by
 * compare-and-set: a delivery that lost the race reads the row again and finds nothing left to take.
 */
async function takeBackDue(ctx: Ctx, paymentIntent: string, next: Taking): Promise<Outcome> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const outcome = await ctx.db.transaction().execute(async (trx): Promise<Outcome | 'again'> => {
      const topup = await topupOfPayment(trx, paymentIntent);
      if (!topup || !TAKEN.has(topup.status)) return 'ignored';
      const seen = { refunded: Number(topup.refunded), disputed: Number(topup.disputed) };
      const due = next(topup);
      if (!due) return 'unchanged';
      const amount = due.refunded - seen.refunded + due.disputed - seen.disputed;
      if (amount <= 0) return 'unchanged';
      if (!(await moveTakenBack(trx, topup.id, seen, due, Date.now()))) return 'again';
      await takeBack(trx, { userId: topup.user_id, amount, ref: topup.id, note: due.note });
      return 'applied';
    });
    if (outcome !== 'again') return outcome;
  }
  throw new Error(`top-up of payment ${paymentIntent}: its row kept moving`);
}

/**
 * An event that takes money back found no credited top-up for its payment. Stripe keeps no order
 * between events: the top-up the payment was for (`topupId`) may still be pending, and then the
 * event is refused so that Stripe delivers it again, after the credit it takes back; or its credit
 * committed since the first look, and it is looked up again (acknowledging the event would lose it).
 */
async function beforeCredit(ctx: Ctx, what: string, paymentIntent: string, topupId: string | undefined, take: () => Promise<Outcome>): Promise<Outcome> {
  if (!topupId) return 'ignored';
  const topup = await getTopup(ctx.db, topupId);
  if (topup?.status === 'pending') throw serviceUnavailable(`${what} came before its top-up was credited: deliver it again later`);
  return topup?.payment_intent === paymentIntent ? take() : 'ignored';
}

/**
 * Refunds: the charge says how much is refunded in all; what is not yet taken back is taken now.
 * The charge names its top-up (the PaymentIntent's metadata, which Stripe copies onto the charge),
 * for a refund that arrives before the session's completion has credited it (beforeCredit).
 */
async function chargeRefunded(ctx: Ctx, charge: Stripe.Charge): Promise<Outcome> {
  const paymentIntent = idOf(charge.payment_intent);
  if (!paymentIntent) return 'ignored';
  const take = () => takeBackDue(ctx, paymentIntent, (topup) => {
    const amount = Number(topup.amount);
    const refunded = Math.max(Number(topup.refunded), Math.min(shareOf(amount, charge.amount_refunded, charge.amount), amount - Number(topup.disputed)));
    const status: TopupStatus = topup.status === 'disputed' ? 'disputed' : refunded >= amount ? 'refunded' : 'partially_refunded';
    return { refunded, disputed: Number(topup.disputed), status, note: `Stripe refund of ${charge.id}` };
  });
  const outcome = await take();
  return outcome === 'ignored' ? beforeCredit(ctx, `The refund of ${charge.id}`, paymentIntent, charge.metadata?.topup_id, take) : outcome;
}

/**
 * The top-up a payment was for, as its PaymentIntent's metadata names it (startTopup puts it
 * there); undefined for a payment Stripe does not know, or one a restricted key may not read
 * (logged: such a dispute cannot be told apart from one that is not ours). Another failure throws:
 * the event is answered 5xx and delivered again.
 */
async function topupOfIntent(ctx: Ctx, paymentIntent: string): Promise<string | undefined> {
  try {
    return (await (await stripeFor(topupsOn(ctx))).paymentIntents.retrieve(paymentIntent)).metadata?.topup_id;
  } catch (err) {
    if (!(err instanceof (await stripeSdk()).errors.StripeError) || (err.statusCode !== 404 && err.statusCode !== 403)) throw err;
    if (err.statusCode === 403) ctx.logger.warn({ paymentIntent }, 'STRIPE_SECRET_KEY may not read PaymentIntents: a lost dispute that came before its top-up was credited cannot be matched');
    return undefined;
  }
}

/**
 * A lost dispute takes back the disputed amount (at most what refunds left), once. A dispute names
 * no top-up itself: one that finds no credited top-up asks Stripe for its payment's (beforeCredit).
 */
async function disputeClosed(ctx: Ctx, dispute: Stripe.Dispute): Promise<Outcome> {
  if (dispute.status !== 'lost') return 'unchanged';
  const paymentIntent = idOf(dispute.payment_intent);
  if (!paymentIntent) return 'ignored';
  const take = () => takeBackDue(ctx, paymentIntent, (topup) => {
    if (Number(topup.disputed) > 0) return undefined;
    const left = Number(topup.amount) - Number(topup.refunded);
    // A dispute in another currency than the top-up's price (a converted charge) is for the whole charge.
    const disputed = dispute.currency === topup.currency ? unitsOf(dispute.amount, topup.currency, left) : left;
    return { refunded: Number(topup.refunded), disputed, status: 'disputed', note: `Stripe dispute ${dispute.id} lost` };
  });
  const outcome = await take();
  return outcome === 'ignored' ? beforeCredit(ctx, `The lost dispute ${dispute.id}`, paymentIntent, await topupOfIntent(ctx, paymentIntent), take) : outcome;
}

export async function applyEvent(ctx: Ctx, event: Stripe.Event): Promise<Outcome> {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      return sessionPaid(ctx, event.data.object);
    case 'checkout.session.async_payment_failed':
      return sessionUnpaid(ctx, event.data.object, 'failed');
    case 'checkout.session.expired':
      return sessionUnpaid(ctx, event.data.object, 'expired');
    case 'charge.refunded':
      return chargeRefunded(ctx, event.data.object);
    case 'charge.dispute.closed':
      return disputeClosed(ctx, event.data.object);
    default:
      return 'ignored';
  }
}
