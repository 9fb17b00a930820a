import { useState, type FormEvent } from 'react';
import { api, type OidcStatus } from '../api.ts';
import { ErrorNote } from '../components.tsx';
import { useAction, useLoad } from '../hooks.ts';
import { Done, hashParam, providerStart, PublicFrame, type Accepted, type SignupSettings } from './public.tsx';

// Open an account: the answer is the same whether or not the email has one; the mail says which.
// With an identity provider configured, the account can be opened through it instead (an invite
// link's code rides along).

export function SignUp() {
  const settings = useLoad<SignupSettings>('/console/api/signup');
  const { data: oidc } = useLoad<OidcStatus>('/console/api/oidc');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [invite, setInvite] = useState(hashParam('invite'));
  const [sent, setSent] = useState<string | undefined>();
  const { busy, error, run } = useAction();
  const mode = settings.data?.mode;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const answer = await api<Accepted>('POST', '/console/api/signup', { email, password, ...(mode === 'invite' ? { invite } : {}) });
      setSent(answer.message);
    });
  };

  if (mode === 'closed') {
    return (
      <PublicFrame title="Create an account">
        <p className="card">Sign-up is closed here: ask the operator for an account.</p>
      </PublicFrame>
    );
  }
  return (
    <PublicFrame title="Create an account">
      <ErrorNote message={settings.error} />
      {sent ? (
        <div className="card">
          <Done message={sent} />
          <p className="muted">The link in it confirms your email; then sign in with your password.</p>
        </div>
      ) : (
        <form onSubmit={submit} className="card" aria-label="Create an account">
          <label>
            Email
            <input type="email" autoComplete="email" required maxLength={320} value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <label>
            Password (at least 10 characters)
            <input type="password" autoComplete="new-password" required minLength={10} maxLength={1000} value={password} onChange={(e) => setPassword(e.target.value)} />
          </label>
          {mode === 'invite' && (
            <label>
              Invite code
              <input autoComplete="off" required maxLength={200} value={invite} onChange={(e) => setInvite(e.target.value)} />
            </label>
          )}
          <ErrorNote message={error} />
          <button type="submit" disabled={busy || mode === undefined}>
            Create account
          </button>
          {oidc?.enabled ? (
            <a className="button secondary provider" href={providerStart(mode === 'invite' ? invite.trim() : '')}>
              Sign up with {oidc.name}
            </a>
          ) : null}
        </form>
      )}
    </PublicFrame>
  );
}
