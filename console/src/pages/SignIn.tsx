import { useState, type FormEvent } from 'react';
import { api, type Session } from '../api.ts';
import { ErrorNote } from '../components.tsx';
import { useAction, useLoad } from '../hooks.ts';
import type { SignupSettings } from './public.tsx';

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [mode, setMode] = useState<'account' | 'operator'>('account');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [adminToken, setAdminToken] = useState('');
  const { busy, error, run } = useAction();
  const signup = useLoad<SignupSettings>('/console/api/signup');

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
        <ErrorNote message={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
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
