import { useState, type FormEvent } from 'react';
import { api } from '../api.ts';
import { ErrorNote } from '../components.tsx';
import { useAction } from '../hooks.ts';
import { Done, PublicFrame, type Accepted } from './public.tsx';

// Ask for a link to set a new password; the answer does not say whether the email has an account.

export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState<string | undefined>();
  const { busy, error, run } = useAction();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => setSent((await api<Accepted>('POST', '/console/api/password-reset', { email })).message));
  };

  return (
    <PublicFrame title="Forgot your password?">
      {sent ? (
        <div className="card">
          <Done message={sent} />
        </div>
      ) : (
        <form onSubmit={submit} className="card" aria-label="Ask for a new password">
          <p className="muted">We mail you a link to choose a new one.</p>
          <label>
            Email
            <input type="email" autoComplete="email" required maxLength={320} value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <ErrorNote message={error} />
          <button type="submit" disabled={busy}>
            Mail me a link
          </button>
        </form>
      )}
    </PublicFrame>
  );
}
