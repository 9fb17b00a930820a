import type Stripe from 'stripe';
import type { TopupsConfig } from '../../config.ts';

// One Stripe SDK client per process, made from the configuration: the secret key and where its calls
// go (STRIPE_API_BASE, the real API unless a test points it at a local fake). The SDK is loaded on
// the first use: a gateway without top-ups (and every CLI command) starts without it.

const clients = new WeakMap<TopupsConfig, Promise<Stripe>>();
let sdk: Promise<typeof Stripe> | undefined;

/** The Stripe SDK's class (its `errors` too). */
export const stripeSdk = (): Promise<typeof Stripe> => (sdk ??= import('stripe').then((m) => m.default));

/** The client for `config`, made once: calls that come while the SDK loads wait for the same one. */
export function stripeFor(config: TopupsConfig): Promise<Stripe> {
  let client = clients.get(config);
  if (!client) {
    const { protocol, host, port } = config.stripeApiBase;
    // Each POST carries an idempotency key, so the SDK's retry after a lost answer makes no second session.
    client = stripeSdk().then((Stripe) => new Stripe(config.stripeSecretKey, { protocol, host, port, maxNetworkRetries: 2, timeout: 20_000, telemetry: false }));
    clients.set(config, client);
  }
  return client;
}
