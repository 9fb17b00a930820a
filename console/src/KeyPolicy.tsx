import { useState, type FormEvent } from 'react';
import { api, type Key } from './api.ts';
import { ErrorNote } from './components.tsx';
import { useAction } from './hooks.ts';

// A key's policy (models, client addresses, expiry) as the key forms of both the account holder and
// the operator edit it: lists are typed comma-separated, the expiry in local time. The same forms
// turn body capture on and off (the call log keeps each call's request and answer).

export interface PolicyInput {
  models: string[];
  allowed_ips: string[];
  expires_at: number | null;
}

const list = (text: string) => text.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);
const localInput = (seconds: number | null) => {
  if (seconds === null) return '';
  const date = new Date(seconds * 1000);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
export const fromLocalInput = (value: string) => (value ? Math.floor(new Date(value).getTime() / 1000) : null);

/** One line saying what a key is limited to. */
export function policySummary(policy: PolicyInput): string {
  const parts = [
    policy.models.length ? `models: ${policy.models.join(', ')}` : 'all models',
    policy.allowed_ips.length ? `from: ${policy.allowed_ips.join(', ')}` : 'any address',
    policy.expires_at === null ? 'no expiry' : `${policy.expires_at * 1000 < Date.now() ? 'expired' : 'expires'} ${new Date(policy.expires_at * 1000).toLocaleString()}`,
  ];
  return parts.join(' · ');
}

/** A key's limits line, with whether its calls' bodies are logged. */
export const keySummary = (key: Key) => `${policySummary(key)}${key.log_bodies ? ' · bodies logged' : ''}`;

/** The body capture checkbox of the key forms. */
export function LogBodiesField({ checked, onChange }: { checked: boolean; onChange: (checked: boolean) => void }) {
  return (
    <label className="check">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      Log request and answer bodies
    </label>
  );
}

/** The three policy fields, for the create forms (state held by the caller). */
export function PolicyFields({ value, onChange }: { value: { models: string; ips: string; expires: string }; onChange: (v: { models: string; ips: string; expires: string }) => void }) {
  return (
    <>
      <label>
        Models (empty = all)
        <input value={value.models} placeholder="imggen-2, textgen-2.5-flash" onChange={(e) => onChange({ ...value, models: e.target.value })} />
      </label>
      <label>
        Allowed addresses (empty = any)
        <input value={value.ips} placeholder="203.0.113.0/24, 2001:db8::/32" onChange={(e) => onChange({ ...value, ips: e.target.value })} />
      </label>
      <label>
        Expires
        <input type="datetime-local" value={value.expires} onChange={(e) => onChange({ ...value, expires: e.target.value })} />
      </label>
    </>
  );
}

export const emptyPolicyText = { models: '', ips: '', expires: '' };
export const policyFromText = (text: typeof emptyPolicyText): PolicyInput => ({ models: list(text.models), allowed_ips: list(text.ips), expires_at: fromLocalInput(text.expires) });
const textOf = (key: Key) => ({ models: key.models.join(', '), ips: key.allowed_ips.join(', '), expires: localInput(key.expires_at) });

/** Edits an existing key's policy through `path` (the console's or the admin route). */
export function PolicyEditor({ keyItem, path, onSaved, holder = false }: { keyItem: Key; path: string; onSaved: () => Promise<void>; holder?: boolean }) {
  const [text, setText] = useState(() => textOf(keyItem));
  const [logBodies, setLogBodies] = useState(keyItem.log_bodies);
  const action = useAction();
  const save = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      await api('PATCH', path, { ...policyFromText(text), log_bodies: logBodies });
      await onSaved();
    });
  };
  return (
    <form className="inline-form policy-form" onSubmit={save} aria-label={`Limits of key ${keyItem.name}`}>
      <PolicyFields value={text} onChange={setText} />
      <LogBodiesField checked={logBodies} onChange={setLogBodies} />
      <button type="submit" disabled={action.busy}>
        Save limits
      </button>
      {holder && keyItem.operator_policy && <p className="muted">Set by the operator: {policySummary(keyItem.operator_policy)}. You may narrow these, not widen them.</p>}
      <ErrorNote message={action.error} />
    </form>
  );
}
