import * as client from 'openid-client';
import type { OidcConfig } from '../../config.ts';
import type { Logger } from 'pino';

// The provider's metadata is discovered at the first sign-in, not at start-up: an identity provider
// that is down must cost only its own sign-ins, never the gateway's start. A failed discovery is
// forgotten, so the next sign-in tries again.

const TIMEOUT_SECONDS = 10;

export interface ProviderClient {
  readonly settings: OidcConfig;
  /** The discovered configuration; rejects while the provider cannot be reached. */
  configuration(): Promise<client.Configuration>;
}

export function providerClient(settings: OidcConfig, logger: Logger): ProviderClient {
  let discovered: Promise<client.Configuration> | undefined;
  const discover = () => {
    const auth = settings.clientAuth === 'client_secret_post' ? client.ClientSecretPost(settings.clientSecret) : client.ClientSecretBasic(settings.clientSecret);
    // The configuration only lets an http issuer through on a loopback address.
    const execute = settings.issuer.startsWith('http:') ? [client.allowInsecureRequests] : [];
    return client.discovery(new URL(settings.issuer), settings.clientId, { client_secret: settings.clientSecret }, auth, { timeout: TIMEOUT_SECONDS, execute });
  };
  return {
    settings,
    configuration() {
      discovered ??= discover().catch((err: unknown) => {
        discovered = undefined;
        logger.warn({ err, issuer: settings.issuer }, 'OpenID Connect discovery failed; the next sign-in tries again');
        throw err;
      });
      return discovered;
    },
  };
}
