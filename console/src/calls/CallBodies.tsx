import { useState } from 'react';
import { api, ApiFailure } from '../api.ts';
import { ErrorNote } from '../components.tsx';

// A call's stored request and answer (a key with "Log request and answer bodies"), fetched when the
// reader opens them: JSON shown indented, a stream's events as they were sent. Secrets were
// redacted before they were stored.

interface Bodies {
  request: unknown;
  response: unknown;
  truncated: boolean;
}

const shown = (body: unknown) => (typeof body === 'string' ? body : JSON.stringify(body, null, 2));

export function CallBodies({ id, operator }: { id: string; operator: boolean }) {
  const [bodies, setBodies] = useState<Bodies | undefined>();
  const [error, setError] = useState<string | undefined>();
  const load = async () => {
    const call = encodeURIComponent(id);
    try {
      // Each role's route written out, so the console's route check finds both in the API document.
      setBodies(operator ? await api<Bodies>('GET', `/admin/calls/${call}/bodies`) : await api<Bodies>('GET', `/console/api/calls/${call}/bodies`));
      setError(undefined);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  return (
    <details className="bodies" data-testid="call-bodies" onToggle={(e) => e.currentTarget.open && !bodies && void load()}>
      <summary>Request and answer bodies</summary>
      <ErrorNote message={error} />
      {bodies && (
        <>
          {bodies.truncated && <p className="muted">A body was longer than the gateway keeps: it is cut.</p>}
          <h3 id={`bodies-request-${id}`}>Request</h3>
          <pre tabIndex={0} aria-labelledby={`bodies-request-${id}`} data-testid="call-body-request">
            {shown(bodies.request)}
          </pre>
          <h3 id={`bodies-response-${id}`}>Answer</h3>
          <pre tabIndex={0} aria-labelledby={`bodies-response-${id}`} data-testid="call-body-response">
            {shown(bodies.response)}
          </pre>
        </>
      )}
    </details>
  );
}
