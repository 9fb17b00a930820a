import { useState, type FormEvent } from 'react';
import { api } from '../api.ts';
import { ErrorNote } from '../components.tsx';
import { useAction } from '../hooks.ts';
import { Done, hashParam, PublicFrame } from './public.tsx';

// The mailed reset link opens here: a new password, typed twice, with the link's token.

export function ResetPassword() {
  const token = hashParam('token');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [done, setDone] = useState(false);
  const [mismatch, setMismatch] = useState<string | undefined>();
  const { busy, error, run } = useAction();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (password !== again) {
      setMismatch('The two passwords differ: type the same one twice');
      return;
    }
    setMismatch(undefined);
    void run(async () => {
      await api('POST', '/console/api/password-reset/confirm', { token, password });
      setDone(true);
    });
  };

  return (
    <PublicFrame title="Choose a new password">
      {done ? (
        <div className="card">
          <Done message="Your new password is set; your other sessions have ended." />
          <p>
            <a href="#/">Sign in</a> with it.
          </p>
        </div>
      ) : (
        <form onSubmit={submit} className="card" aria-label="Choose a new password">
          <label>
            New password (at least 10 characters)
            <input type="password" autoComplete="new-password" required minLength={10} maxLength={1000} value={password} onChange={(e) => setPassword(e.target.value)} />
          </label>
          <label>
            New password again
            <input type="password" autoComplete="new-password" required minLength={10} maxLength={1000} value={again} onChange={(e) => setAgain(e.target.value)} />
          </label>
          <ErrorNote message={mismatch ?? error} />
          {!token && <ErrorNote message="This link has no token: open the link from the mail whole" />}
          <button type="submit" disabled={busy || !token}>
            Set password
          </button>
        </form>
      )}
    </PublicFrame>
  );
}
