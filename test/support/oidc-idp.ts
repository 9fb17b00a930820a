import { generateKeyPairSync } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

// A real OpenID Connect provider (oidc-provider) on a local port, with one static confidential
// client and accounts the test adds. Its login and consent pages are answered in code: the
// browser names who signs in in a header, and consent grants what the client asked for.

export const CLIENT_ID = 'gateway-console';
export const CLIENT_SECRET = 'client-secret-for-tests-0123456789';
/** Who signs in at the provider: the test's browser sends it, as a person would type it in. */
export const LOGIN_HEADER = 'x-test-login';

export interface IdpAccount {
  email?: string;
  email_verified?: boolean;
}

export interface TestIdp {
  issuer: string;
  accounts: Map<string, IdpAccount>;
  close(): Promise<void>;
}

async function interact(provider: Provider, req: IncomingMessage, res: ServerResponse) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    const accountId = req.headers[LOGIN_HEADER];
    if (typeof accountId !== 'string') throw new Error(`the browser sent no ${LOGIN_HEADER} header`);
    return provider.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
  }
  const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
  const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  return provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
}

/** Starts the provider on `port` (0: any free port); `redirectUris` are the client's registered callbacks. */
export async function startIdp(redirectUris: string[], port = 0): Promise<TestIdp> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = new Map<string, IdpAccount>();
  const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
    jwks: { keys: [{ ...jwk, use: 'sig', kid: 'test-key' }] },
    cookies: { keys: ['cookie-signing-key-for-tests-0123456789'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: false } },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, IdToken: 600, Interaction: 600, Session: 3600 },
    // A sign-in without PKCE is refused here, so a passing test shows the gateway used it.
    pkce: { required: () => true },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      return account && { accountId: sub, claims: async () => ({ sub, ...account }) };
    },
  });
  const handle = provider.callback();
  server.on('request', (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return handle(req, res);
    interact(provider, req, res).catch((err: Error) => {
      res.statusCode = 500;
      res.end(`interaction failed: ${err.message}`);
    });
  });
  return {
    issuer,
    accounts,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
