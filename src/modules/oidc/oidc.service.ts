import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as client from 'openid-client';
import type { AppContext } from '../../context.ts';
import { getUser } from '../accounts/accounts.repo.ts';
import { findCredentialsByEmail } from '../console/sessions.repo.ts';
import { tokenHash } from '../console/session-guard.ts';
import { openAccount, unusablePassword } from '../signup/open-account.ts';
import { setUnconfirmedPassword } from '../signup/signup.repo.ts';
import { openWithInvite } from '../signup/invites.service.ts';
import { ApiError } from '../../core/errors.ts';
import { deleteExpiredLogins, findIdentity, insertLogin, linkIdentity, takeLogin } from './oidc.repo.ts';
import type { OidcErrorCode } from './oidc.schemas.ts';
import type { ProviderClient } from './provider-client.ts';

// Authorization code flow with PKCE (S256), state and nonce. What the callback must check stays on
// the server (oidc_logins); the browser holds a random token in an HttpOnly cookie that names it.
// So the callback is bound to the browser that started the sign-in (another's state is worthless
// without its cookie), each sign-in is used once, and the PKCE verifier never leaves the server.

const LOGIN_TTL_MS = 10 * 60_000;
const SCOPE = 'openid email profile';
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class OidcRefusal extends Error {
  constructor(
    readonly code: OidcErrorCode,
    detail: string,
  ) {
    super(detail);
  }
}

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

async function configuration(provider: ProviderClient): Promise<client.Configuration> {
  try {
    return await provider.configuration();
  } catch {
    throw new OidcRefusal('unreachable', 'the identity provider could not be reached');
  }
}

/** The provider's authorization URL for a new sign-in, and the token for the browser's cookie. */
export async function beginSignIn(ctx: Pick<AppContext, 'db'>, provider: ProviderClient, invite: string | undefined) {
  const config = await configuration(provider);
  const token = randomBytes(32).toString('base64url');
  const state = client.randomState();
  const nonce = client.randomNonce();
  const verifier = client.randomPKCECodeVerifier();
  const now = Date.now();
  await deleteExpiredLogins(ctx.db, now);
  await insertLogin(ctx.db, { token_hash: tokenHash(token), state, nonce, code_verifier: verifier, invite: invite ?? null, created_at: now, expires_at: now + LOGIN_TTL_MS });
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: provider.settings.redirectUrl,
    scope: SCOPE,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url: url.href, token, maxAgeSeconds: LOGIN_TTL_MS / 1000 };
}

interface Person {
  issuer: string;
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
}

/** The provider's answer, checked: state, the code exchanged with the PKCE verifier, the ID token and its nonce. */
async function verifiedPerson(ctx: Pick<AppContext, 'db' | 'logger'>, provider: ProviderClient, cookieToken: string | undefined, query: string): Promise<Person & { invite: string | null }> {
  const params = new URLSearchParams(query);
  const login = cookieToken ? await takeLogin(ctx.db, tokenHash(cookieToken), Date.now()) : undefined;
  const state = params.get('state');
  if (!login || !state || !sameText(state, login.state)) throw new OidcRefusal('state', 'no sign-in of this browser matches the callback state');
  if (params.has('error')) throw new OidcRefusal('denied', `the provider answered ${params.get('error')}`);
  const config = await configuration(provider);
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    const currentUrl = new URL(provider.settings.redirectUrl);
    currentUrl.search = params.toString();
    tokens = await client.authorizationCodeGrant(config, currentUrl, { pkceCodeVerifier: login.code_verifier, expectedState: login.state, expectedNonce: login.nonce, idTokenExpected: true });
  } catch (err) {
    ctx.logger.warn({ err, issuer: provider.settings.issuer }, 'an OpenID Connect sign-in was refused: the code exchange or ID token did not check out');
    throw new OidcRefusal('token', 'the provider answer did not check out');
  }
  const claims = tokens.claims()!;
  let email = claims.email;
  let verified = claims.email_verified;
  // Many providers put email in the UserInfo answer only (the ID token of a code flow carries the minimum).
  if (email === undefined || verified === undefined) {
    try {
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      email ??= info.email;
      verified ??= info.email_verified;
    } catch (err) {
      ctx.logger.warn({ err, issuer: provider.settings.issuer }, 'OpenID Connect UserInfo failed; going on with the ID token claims');
    }
  }
  const normalized = typeof email === 'string' ? email.trim().toLowerCase() : undefined;
  return {
    issuer: config.serverMetadata().issuer,
    subject: claims.sub,
    email: normalized && EMAIL.test(normalized) ? normalized : undefined,
    // Some providers send the string "true".
    emailVerified: verified === true || verified === 'true',
    invite: login.invite,
  };
}

async function activeUser(ctx: Pick<AppContext, 'db'>, userId: string): Promise<string> {
  const user = await getUser(ctx.db, userId);
  if (!user || user.status !== 'active') throw new OidcRefusal('disabled', `account ${userId} is not active`);
  return user.id;
}

/**
 * The account the callback signs in: the one its identity is linked to; else the account with the
 * provider's verified email, linked now; else a new account when sign-up allows it. An email the
 * provider has not verified never reaches an account, existing or new.
 */
export async function finishSignIn(ctx: AppContext, provider: ProviderClient, cookieToken: string | undefined, query: string): Promise<string> {
  const person = await verifiedPerson(ctx, provider, cookieToken, query);
  const linked = await findIdentity(ctx.db, person.issuer, person.subject);
  if (linked) return activeUser(ctx, linked.user_id);
  const email = person.email;
  if (!email) throw new OidcRefusal('no_email', 'the provider gave no email address');
  if (!person.emailVerified) throw new OidcRefusal('unverified', `the provider has not verified ${email}`);
  const link = async (userId: string) => linkIdentity(ctx.db, { issuer: person.issuer, subject: person.subject, user_id: userId, email, now: Date.now() });
  const existing = await findCredentialsByEmail(ctx.db, email);
  if (existing) {
    const userId = await activeUser(ctx, existing.user_id);
    // A sign-up never confirmed: the provider has now shown the email is this person's, but the
    // password was set by whoever signed up, unproven (maybe someone else with this address): it
    // goes, and the email counts as confirmed.
    if (existing.email_verified_at === null) await setUnconfirmedPassword(ctx.db, userId, unusablePassword(), Date.now(), true);
    // Another callback may have linked this identity a moment ago: its account is the one.
    return activeUser(ctx, await link(userId));
  }
  if (ctx.config.signup.mode === 'closed') throw new OidcRefusal('closed', `no account has ${email} and sign-up is closed`);
  const open = () => openAccount(ctx, { email, passwordHash: null, verified: true });
  if (ctx.config.signup.mode !== 'invite') return link(await open());
  try {
    return link(await openWithInvite(ctx, person.invite ?? undefined, email, open));
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) throw new OidcRefusal('invite', `no usable invitation for ${email}: ${err.message}`);
    throw err;
  }
}
