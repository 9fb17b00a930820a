import { useEffect, useRef, useState } from 'react';
import { api, ApiFailure } from '../api.ts';
import { ErrorNote } from '../components.tsx';
import { Done, hashParam, PublicFrame } from './public.tsx';

// The mailed confirmation link opens here: its token is sent once (it works only once). An account
// two sign-ups named has no password yet: the answer's token opens the page that sets one.

export function Verify() {
  const token = hashParam('token');
  const sent = useRef(false);
  const [state, setState] = useState<{ done?: boolean; passwordToken?: string; error?: string }>({});

  useEffect(() => {
    if (sent.current) return;
    sent.current = true;
    if (!token) {
      setState({ error: 'This link has no token: open the link from the mail whole' });
      return;
    }
    api<{ verified: boolean; password_token?: string }>('POST', '/console/api/verify', { token })
      .then((answer) => setState({ done: true, passwordToken: answer.password_token }))
      .catch((err: unknown) => setState({ error: err instanceof ApiFailure ? err.message : String(err) }));
  }, [token]);

  return (
    <PublicFrame title="Confirm your email">
      <div className="card">
        {state.done && state.passwordToken ? (
          <>
            <Done message="Your email is confirmed." />
            <p>
              This email was used for more than one sign-up, so no password was kept: <a href={`#/reset?token=${encodeURIComponent(state.passwordToken)}`}>choose your password</a>.
            </p>
          </>
        ) : state.done ? (
          <>
            <Done message="Your email is confirmed." />
            <p>
              <a href="#/">Sign in</a> with your email and password.
            </p>
          </>
        ) : state.error ? (
          <>
            <ErrorNote message={state.error} />
            <p>
              <a href="#/signup">Sign up again</a> with the same email for a new link.
            </p>
          </>
        ) : (
          <p aria-busy="true">Confirming…</p>
        )}
      </div>
    </PublicFrame>
  );
}
