import { useEffect, useState, type FormEvent } from 'react';
import { api, type AdminGroup } from '../api.ts';
import { ErrorNote, Section } from '../components.tsx';
import { useAction } from '../hooks.ts';

// Creates a group, or replaces every setting of the one with that name. Overrides are typed as the
// price table's JSON (per model, any form config/pricing.json takes); the server checks them and its
// 400 names what is wrong.

const empty = { name: '', multiplier: '1', models: '', prices: '' };
const textOf = (group: AdminGroup) => ({
  name: group.name,
  multiplier: String(group.multiplier),
  models: group.models.join(', '),
  prices: Object.keys(group.prices).length ? JSON.stringify(group.prices, null, 2) : '',
});
const list = (text: string) => text.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);

export function GroupForm({ editing, onSaved }: { editing?: AdminGroup; onSaved: () => Promise<void> }) {
  const [form, setForm] = useState(empty);
  const [saved, setSaved] = useState<string | undefined>();
  const action = useAction();
  useEffect(() => {
    if (editing) setForm(textOf(editing));
  }, [editing]);
  const field = (name: keyof typeof empty) => ({ value: form[name], onChange: (e: { target: { value: string } }) => setForm({ ...form, [name]: e.target.value }) });

  const save = (event: FormEvent) => {
    event.preventDefault();
    setSaved(undefined);
    void action.run(async () => {
      let prices: unknown;
      try {
        prices = form.prices.trim() ? JSON.parse(form.prices) : {};
      } catch (err) {
        throw new Error(`Price overrides are not valid JSON: ${(err as Error).message}`);
      }
      const group = await api<AdminGroup>('POST', '/admin/groups', { name: form.name.trim(), multiplier: Number(form.multiplier), models: list(form.models), prices });
      setSaved(`Saved group ${group.name}: its accounts pay these prices within a second.`);
      setForm(empty);
      await onSaved();
    });
  };

  return (
    <Section title="Create or replace a group">
      <form onSubmit={save} aria-label="Group">
        <div className="grid-form">
          <label>
            Name
            <input required maxLength={100} {...field('name')} />
          </label>
          <label>
            Price multiplier
            <input type="number" min="0" step="any" required {...field('multiplier')} />
          </label>
          <label>
            Models (empty = all)
            <input placeholder="imggen-2, textgen-2.5-flash" {...field('models')} />
          </label>
        </div>
        <label>
          Price overrides (JSON, optional: per model, the format of config/pricing.json, in USD)
          <textarea className="code-editor" rows={8} spellCheck={false} placeholder='{ "imggen-2": { "per_image": { "1k": 0.02 } } }' {...field('prices')} />
        </label>
        <div className="form-actions">
          <button type="submit" disabled={action.busy}>
            Save group
          </button>
        </div>
      </form>
      {saved && <p role="status">{saved}</p>}
      <ErrorNote message={action.error} />
    </Section>
  );
}
