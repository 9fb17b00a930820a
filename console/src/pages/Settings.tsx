import { useState, type FormEvent } from 'react';
import { api, unitName, type Account } from '../api.ts';
import { ErrorNote, Section } from '../components.tsx';
import { useAction, useCopy, useLoad } from '../hooks.ts';

export function Settings() {
  return (
    <>
      <SigningSecret />
      <BalanceAlert />
    </>
  );
}

/** alert_below and alert_url: one signed balance.low event when the balance falls below. */
function BalanceAlert() {
  const account = useLoad<Account>('/console/api/account');
  return (
    <Section title="Low-balance alert">
      <p>
        When the balance falls below this amount, one signed <code>balance.low</code> event is POSTed to the address (signed like callbacks, with
        the secret above); the next one only after a top-up lifts the balance above it again.
      </p>
      <ErrorNote message={account.error} />
      {account.data && <AlertForm account={account.data} onSaved={account.reload} />}
    </Section>
  );
}

function AlertForm({ account, onSaved }: { account: Account; onSaved: () => Promise<void> }) {
  const [below, setBelow] = useState(account.alert_below === null ? '' : String(account.alert_below));
  const [url, setUrl] = useState(account.alert_url ?? '');
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const save = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      setSaved(false);
      await api('PATCH', '/console/api/account', { alert_below: below === '' ? null : Number(below), alert_url: url === '' ? null : url });
      setSaved(true);
      await onSaved();
    });
  };
  return (
    <form className="inline-form" onSubmit={save} aria-label="Low-balance alert">
      <label>
        Alert below ({unitName()})
        <input type="number" min="0" step="any" value={below} onChange={(e) => setBelow(e.target.value)} />
      </label>
      <label>
        Alert URL
        <input type="url" placeholder="https://example.com/hooks/balance" value={url} onChange={(e) => setUrl(e.target.value)} />
      </label>
      <button type="submit" disabled={action.busy}>
        Save alert
      </button>
      {saved && <p role="status">Alert saved.</p>}
      <ErrorNote message={action.error} />
    </form>
  );
}

function SigningSecret() {
  const secret = useLoad<{ secret: string }>('/console/api/webhook-secret');
  const [shown, setShown] = useState(false);
  const copier = useCopy();
  return (
    <Section title="Callback signing secret">
      <p>
        Every callback carries <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code> headers (Standard
        Webhooks), signed with this secret. Verify them before trusting a callback.
      </p>
      <ErrorNote message={secret.error} />
      {secret.data && (
        <div className="secret">
          <code data-testid="signing-secret">{shown || copier.state === 'blocked' ? secret.data.secret : `${secret.data.secret.slice(0, 10)}…`}</code>
          <button type="button" className="secondary" onClick={() => setShown(!shown)}>
            {shown ? 'Hide' : 'Show'}
          </button>
          <button type="button" className="secondary" onClick={() => copier.copy(secret.data!.secret)}>
            {copier.label}
          </button>
          <RotateSecret
            onRotated={async () => {
              copier.reset();
              await secret.reload();
            }}
          />
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
