import { useState } from 'react';
import { api } from '../api.ts';
import { ErrorNote, Section } from '../components.tsx';
import { useAction, useLoad } from '../hooks.ts';

export function Settings() {
  const secret = useLoad<{ secret: string }>('/console/api/webhook-secret');
  const [shown, setShown] = useState(false);
  return (
    <Section title="Callback signing secret">
      <p>
        Every callback carries <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code> headers (Standard
        Webhooks), signed with this secret. Verify them before trusting a callback.
      </p>
      <ErrorNote message={secret.error} />
      {secret.data && (
        <div className="secret">
          <code data-testid="signing-secret">{shown ? secret.data.secret : `${secret.data.secret.slice(0, 10)}…`}</code>
          <button type="button" className="secondary" onClick={() => setShown(!shown)}>
            {shown ? 'Hide' : 'Show'}
          </button>
          <RotateSecret onRotated={secret.reload} />
        </div>
      )}
    </Section>
  );
}

function RotateSecret({ onRotated }: { onRotated: () => Promise<void> }) {
  const action = useAction();
  return (
    <>
      <button
        type="button"
        disabled={action.busy}
        onClick={() =>
          action.run(async () => {
            if (!window.confirm('Replace the signing secret? Receivers must switch to the new one.')) return;
            await api('POST', '/console/api/webhook-secret/rotate');
            await onRotated();
          })
        }
      >
        Rotate secret
      </button>
      <ErrorNote message={action.error} />
    </>
  );
}
