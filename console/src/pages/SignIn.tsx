import { useEffect, useState, type FormEvent } from 'react';
import { api, type OidcErrorCode, type OidcStatus, type Session } from '../api.ts';
import { ErrorNote } from '../components.tsx';
import { useAction, useLoad } from '../hooks.ts';
import { hashParam, providerStart, type SignupSettings } from './public.tsx';

// A sign-in through the identity provider that failed comes back as /console/?oidc_error=<code>: the
// page says why in its own words (a code, so no link can put other words here).
const PROVIDER_ERRORS: Record<OidcErrorCode, string> = {
  state: 'That sign-in expired or was started in another browser. Please try again.',
  denied: 'The identity provider did not sign you in.',
  token: 'The identity provider’s answer could not be verified. Please try again.',
  unreachable: 'The identity provider cannot be reached right now. Please try again in a moment.',
  no_email: 'The identity provider did not share your email address, which the console needs.',
  unverified: 'The identity provider has not verified your email address, so it cannot be used to sign in here.',
  closed: 'No account uses this email address, and sign-up is closed. Ask the operator for an account.',
  invite: 'A new account needs a valid invitation.',
  disabled: 'This account is disabled.',
  too_many: 'Too many sign-in attempts from your address. Please wait a minute.',
};

/** The provider's error the address carries. */
function providerError(): string | undefined {
  const code = new URLSearchParams(window.location.search).get('oidc_error');
  if (code === null) return undefined;
  return PROVIDER_ERRORS[code as OidcErrorCode] ?? 'Sign-in with the identity provider failed.';
}

/** Once shown, the error leaves the address, so a reload does not show it again. */
function forgetProviderError() {
  const params = new URLSearchParams(window.location.search);
  if (!params.has('oidc_error')) return;
  params.delete('oidc_error');
  const rest = params.toString();
  window.history.replaceState(null, '', `${window.location.pathname}${rest ? `?${rest}` : ''}${window.location.hash}`);
}

/** An invitation in the console's address (?invite= or an invite link's #/signup?invite=) rides along to the provider sign-in. */
const startLink = () => providerStart(new URLSearchParams(window.location.search).get('invite') ?? hashParam('invite'));

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [mode, setMode] = useState<'account' | 'operator'>('account');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [adminToken, setAdminToken] = useState('');
  const { busy, error, run } = useAction();
  const signup = useLoad<SignupSettings>('/console/api/signup');
  const [fromProvider] = useState(providerError);
  useEffect(forgetProviderError, []);
  const { data: oidc } = useLoad<OidcStatus>('/console/api/oidc');

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const session =
        mode === 'account'
          ? await api<Session>('POST', '/console/api/session', { email, password })
          : await api<Session>('POST', '/console/api/session/operator', { admin_token: adminToken });
      onSignedIn(session);
    });
  };

  return (
    <main className="signin">
      <h1>Generation Gateway console</h1>
      <div className="tabs" role="tablist" aria-label="Who is signing in">
        <button type="button" role="tab" aria-selected={mode === 'account'} onClick={() => setMode('account')}>
          Account holder
        </button>
        <button type="button" role="tab" aria-selected={mode === 'operator'} onClick={() => setMode('operator')}>
          Operator
        </button>
      </div>
      <form onSubmit={submit} className="card">
        {mode === 'account' ? (
          <>
            <label>
              Email
              <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
            </label>
            <label>
              Password
              <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
            </label>
          </>
        ) : (
          <label>
            Admin token
            <input type="password" autoComplete="off" required value={adminToken} onChange={(e) => setAdminToken(e.target.value)} />
          </label>
        )}
        <ErrorNote message={error ?? (mode === 'account' ? fromProvider : undefined)} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {mode === 'account' && oidc?.enabled ? (
          <a className="button secondary provider" href={startLink()}>
            Sign in with {oidc.name}
          </a>
        ) : null}
      </form>
      {mode === 'account' && (
        <p className="public-links">
          {signup.data?.password_reset && <a href="#/forgot">Forgot your password?</a>}
          {signup.data && signup.data.mode !== 'closed' && <a href="#/signup">Create an account</a>}
        </p>
      )}
    </main>
  );
}
