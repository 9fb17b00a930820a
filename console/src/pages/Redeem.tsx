import { useState, type FormEvent } from 'react';
import { api, type Redeemed } from '../api.ts';
import { ErrorNote, Money } from '../components.tsx';
import { useAction } from '../hooks.ts';

// A redemption code from the operator adds its amount to this account's balance, once.

export function Redeem({ onRedeemed }: { onRedeemed: () => Promise<void> }) {
  const [code, setCode] = useState('');
  const [done, setDone] = useState<Redeemed | undefined>();
  const action = useAction();

  const redeem = (event: FormEvent) => {
    event.preventDefault();
    setDone(undefined);
    void action.run(async () => {
      setDone(await api<Redeemed>('POST', '/console/api/redeem', { code: code.trim() }));
      setCode('');
      await onRedeemed();
    });
  };

  return (
    <>
      <form className="inline-form" onSubmit={redeem} aria-label="Redeem a code">
        <label>
          Redemption code
          <input required maxLength={200} placeholder="gw-..." autoComplete="off" spellCheck={false} value={code} onChange={(e) => setCode(e.target.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Redeem
        </button>
      </form>
      {done && (
        <p role="status">
          Redeemed: <Money value={done.amount} /> added to your balance.
        </p>
      )}
      <ErrorNote message={action.error} />
    </>
  );
}
