import { useState, type FormEvent } from 'react';
import { api, money, unitName, type CreatedCodes } from '../api.ts';
import { ErrorNote, Section } from '../components.tsx';
import { useAction, useCopy } from '../hooks.ts';
import { fromLocalInput } from '../KeyPolicy.tsx';

// A batch of redemption codes. The server keeps only their hashes, so the answer to this form is the
// one time anyone sees the codes: they stay on screen, copyable, until the operator hides them.

const empty = { amount: '', count: '1', uses: '1', expires: '', note: '' };

export function NewCodes({ onMade }: { onMade: () => Promise<void> }) {
  const [form, setForm] = useState(empty);
  const [made, setMade] = useState<CreatedCodes | undefined>();
  const copier = useCopy();
  const action = useAction();
  const field = (name: keyof typeof empty) => ({ value: form[name], onChange: (e: { target: { value: string } }) => setForm({ ...form, [name]: e.target.value }) });

  const make = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const created = await api<CreatedCodes>('POST', '/admin/codes', {
        amount: Number(form.amount),
        count: Number(form.count),
        uses: Number(form.uses),
        expires_at: fromLocalInput(form.expires),
        ...(form.note.trim() ? { note: form.note.trim() } : {}),
      });
      copier.reset();
      setMade(created);
      setForm(empty);
      await onMade();
    });
  };
  const plain = made?.codes.map((c) => c.code).join('\n') ?? '';

  return (
    <Section title="New codes">
      <form className="inline-form" onSubmit={make} aria-label="Make codes">
        <label>
          Amount per code ({unitName()})
          <input type="number" min="0" step="any" required {...field('amount')} />
        </label>
        <label>
          How many codes
          <input type="number" min="1" max="1000" step="1" required {...field('count')} />
        </label>
        <label>
          Accounts per code
          <input type="number" min="1" step="1" required {...field('uses')} />
        </label>
        <label>
          Expires (empty = never)
          <input type="datetime-local" {...field('expires')} />
        </label>
        <label>
          Note
          <input maxLength={500} placeholder="spring promotion" {...field('note')} />
        </label>
        <button type="submit" disabled={action.busy}>
          Make codes
        </button>
      </form>
      <ErrorNote message={action.error} />
      {made && made.codes.length > 0 && (
        <div className="secret" role="status">
          <p>
            <strong>Shown once:</strong> copy {made.codes.length === 1 ? 'this code' : `these ${made.codes.length} codes`} now ({money(made.codes[0]!.amount)} each, batch <code>{made.batch_id}</code>). Only their hashes are
            kept, so no one can show them again.
          </p>
          <ol className="code-list" data-testid="new-codes" aria-label="New codes">
            {made.codes.map((c) => (
              <li key={c.id} data-code-id={c.id}>
                <code>{c.code}</code> <span className="muted">{c.id}</span>
              </li>
            ))}
          </ol>
          <button type="button" onClick={() => copier.copy(plain)}>
            {copier.label === 'Copy' ? 'Copy all' : copier.label}
          </button>
          <button type="button" className="secondary" onClick={() => setMade(undefined)}>
            Hide codes
          </button>
        </div>
      )}
    </Section>
  );
}
