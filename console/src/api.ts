// Every call the console makes goes through here: the JSON routes documented in /openapi.json, the
// session cookie sent by the browser, and the CSRF token echoed on writes.

import type { Static } from 'typebox';
import type * as AdminSchemas from '../../src/modules/admin/admin.schemas.ts';
import type * as CallSchemas from '../../src/modules/calls/calls.schemas.ts';
import type * as ChannelSchemas from '../../src/modules/channels/channels.schemas.ts';
import type * as CodeSchemas from '../../src/modules/codes/codes.schemas.ts';
import type * as ConsoleSchemas from '../../src/modules/console/console.schemas.ts';
import type * as TopupSchemas from '../../src/modules/topups/topups.schemas.ts';
import type * as OidcSchemas from '../../src/modules/oidc/oidc.schemas.ts';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = '';
export const setCsrfToken = (token: string) => {
  csrfToken = token;
};

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const text = await res.text();
  const data = text ? JSON.parse(text) : undefined;
  if (!res.ok) throw new ApiFailure(res.status, data?.error?.message ?? `${res.status} ${res.statusText}`);
  return data as T;
}

// The wire types are the server's own response schemas (type-only imports: nothing of the server
// reaches the bundle), so the pages cannot drift from what the API sends.
export type Session = Static<typeof ConsoleSchemas.Session>;
export type Account = Static<typeof ConsoleSchemas.Account>;
export type Key = Static<typeof AdminSchemas.Key>;
export type KeyUsage = Static<typeof ConsoleSchemas.KeyUsage>;
export type TaskRow = Static<typeof ConsoleSchemas.TaskRow>;
export type Attempt = Static<typeof ConsoleSchemas.Attempt>;
export type AdminUser = Static<typeof AdminSchemas.User>;
export type Channel = Static<typeof ChannelSchemas.Channel>;
export type ChannelTypeInfo = Static<typeof ChannelSchemas.ChannelType>;
export type DayTotals = Static<typeof ConsoleSchemas.DayTotals>;
export type Redeemed = Static<typeof CodeSchemas.Redeemed>;
export type RedeemCode = Static<typeof CodeSchemas.Code>;
export type CreatedCodes = Static<typeof CodeSchemas.CreatedCodes>;
export type AdminGroup = Static<typeof AdminSchemas.Group>;
export type Topup = Static<typeof TopupSchemas.Topup>;
export type CreatedTopup = Static<typeof TopupSchemas.CreatedTopup>;
export type OidcStatus = Static<typeof OidcSchemas.OidcStatus>;
export type OidcErrorCode = OidcSchemas.OidcErrorCode;
/** A call log row; the holder's view has no channel. */
export type Call = Static<typeof CallSchemas.AccountCall> & Partial<Pick<Static<typeof CallSchemas.AdminCall>, 'channel'>>;

export type BillingUnit = Session['billing_unit'];

// Every amount is in BILLING_UNIT; the session says which, once, at sign-in.
let billingUnit: BillingUnit = 'usd';
export const setBillingUnit = (unit: BillingUnit) => {
  billingUnit = unit;
};
// Top-ups with Stripe: their limits, or null when the gateway has them off (the session says, at sign-in).
export type TopupSettings = NonNullable<Session['topups']>;
let topupSettings: TopupSettings | null = null;
export const setTopupSettings = (settings: TopupSettings | null) => {
  topupSettings = settings;
};
export const topupsOffered = () => topupSettings;
/** An amount of a currency as Stripe charges it ($12.50, €12.50). */
export const price = (amount: number, currency: string) => new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() }).format(amount);

export const unitName = () => (billingUnit === 'usd' ? 'USD' : 'credits');

const cents = (value: number) => value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const withUnit = (text: string, negative: boolean) => (billingUnit === 'usd' ? `${negative ? '-' : ''}$${text}` : `${negative ? '-' : ''}${text} credits`);

/**
 * An amount as people read money: the unit, always two decimals ($9.39, 1,234.50 credits). A cost
 * too small to show in cents says so (< $0.01) instead of looking free; `exactMoney` has every digit.
 */
export function money(value: number): string {
  const negative = value < 0;
  const size = Math.abs(value);
  if (size > 0 && size < 0.005) return `< ${withUnit('0.01', negative)}`;
  return withUnit(cents(size), negative);
}

/** The amount to the ledger's precision (one millionth of a dollar), for a tooltip or an export. */
export const exactMoney = (value: number) =>
  withUnit(Math.abs(value).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 }), value < 0);
export const when = (seconds: number) => new Date(seconds * 1000).toLocaleString();
