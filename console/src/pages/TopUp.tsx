import { useState, type FormEvent } from 'react';
import { api, money, topupsOffered, unitName, type CreatedTopup } from '../api.ts';
import { ErrorNote, Section } from '../components.tsx';
import { useAction } from '../hooks.ts';
import { TopupTable } from '../topups/TopupTable.tsx';
import { useTopupPages } from '../topups/useTopupPages.ts';

// The account holder adds to the balance by paying at Stripe Checkout: the gateway starts a
// checkout for the amount and the browser goes to Stripe's page; Stripe sends it back here, and the
// balance grows once Stripe's signed event confirms the payment (which may be after the return).

function returnNote(): string | undefined {
  const query = new URLSearchParams(window.location.search);
  if (query.has('checkout')) return 'Thank you: Stripe has your payment. The balance grows as soon as Stripe confirms it; the list below shows each top-up as it stands.';
  if (query.has('cancelled')) return 'Checkout cancelled: nothing was charged.';
  return undefined;
}

export function TopUp() {
  const settings = topupsOffered();
  const [amount, setAmount] = useState('');
  const action = useAction();
  const history = useTopupPages(false, '');
  const note = returnNote();
  if (!settings) return <p className="muted">Top-ups are not offered on this gateway.</p>;

  const pay = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const created = await api<CreatedTopup>('POST', '/console/api/topups', { amount: Number(amount) });
      window.location.assign(created.checkout_url);
    });
  };

  return (
    <>
      <Section title="Add to your balance">
        {note && <p role="status">{note}</p>}
        <form className="inline-form" onSubmit={pay} aria-label="Top up">
          <label>
            Amount ({unitName()})
            <input type="number" required inputMode="decimal" min={settings.min} max={settings.max} step="any" value={amount} onChange={(e) => setAmount(e.target.value)} aria-describedby="topup-limits" />
          </label>
          <button type="submit" disabled={action.busy}>
            Pay with Stripe
          </button>
        </form>
        <p id="topup-limits" className="muted note">
          From {money(settings.min)} to {money(settings.max)}, paid in {settings.currency.toUpperCase()} at Stripe Checkout.
        </p>
        <ErrorNote message={action.error} />
      </Section>
      <Section
        title="Your top-ups"
        actions={
          <button type="button" className="secondary" onClick={() => history.load(null)}>
            Refresh
          </button>
        }
      >
        <ErrorNote message={history.error} />
        {history.rows?.length === 0 && <p className="muted">No top-ups yet.</p>}
        {history.rows && history.rows.length > 0 && <TopupTable rows={history.rows} operator={false} />}
        {history.next && (
          <button type="button" className="secondary more" disabled={history.busy} onClick={() => history.load(history.next)}>
            More
          </button>
        )}
      </Section>
    </>
  );
}
