import { useState, type FormEvent } from 'react';
import { ErrorNote, Section } from '../components.tsx';
import { TopupTable } from '../topups/TopupTable.tsx';
import { useTopupPages } from '../topups/useTopupPages.ts';

// Every account's top-ups paid with Stripe, newest first, or one account's.

export function Topups() {
  const [typed, setTyped] = useState('');
  const [userId, setUserId] = useState('');
  const list = useTopupPages(true, userId);
  const filter = (event: FormEvent) => {
    event.preventDefault();
    setUserId(typed.trim());
  };

  return (
    <Section
      title="All top-ups"
      actions={
        <button type="button" className="secondary" onClick={() => list.load(null)}>
          Refresh
        </button>
      }
    >
      <form className="inline-form" onSubmit={filter} aria-label="Filter top-ups">
        <label>
          Account id
          <input placeholder="usr_..." autoComplete="off" spellCheck={false} value={typed} onChange={(e) => setTyped(e.target.value)} />
        </label>
        <button type="submit" className="secondary">
          Filter
        </button>
      </form>
      <ErrorNote message={list.error} />
      {list.rows?.length === 0 && <p className="muted">No top-ups match.</p>}
      {list.rows && list.rows.length > 0 && <TopupTable rows={list.rows} operator={true} />}
      {list.next && (
        <button type="button" className="secondary more" disabled={list.busy} onClick={() => list.load(list.next)}>
          More
        </button>
      )}
    </Section>
  );
}
