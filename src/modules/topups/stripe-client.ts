import Stripe from 'stripe';
import type { TopupsConfig } from '../../config.ts';

// One Stripe SDK client per process, made from the configuration: the secret key and where its calls
// go (STRIPE_API_BASE, the real API unless a test points it at a local fake).

const clients = new WeakMap<TopupsConfig, Stripe>();

export function stripeFor(config: TopupsConfig): Stripe {
  let client = clients.get(config);
  if (!client) {
    const { protocol, host, port } = config.stripeApiBase;
    // Each POST carries an idempotency key, so the SDK's retry after a lost answer makes no second session.
    client = new Stripe(config.stripeSecretKey, { protocol, host, port, maxNetworkRetries: 2, timeout: 20_000, telemetry: false });
    clients.set(config, client);
  }
  return client;
}
