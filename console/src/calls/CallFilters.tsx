import { useState, type FormEvent } from 'react';
import type { AdminUser, Channel, Key } from '../api.ts';
import { useLoad } from '../hooks.ts';

// The call log's filters. Times are typed in the reader's own clock and sent as Unix seconds; the
// operator also picks an account and a channel, and the keys offered are that account's.

export type Filters = { key_id: string; model: string; status: string; from: string; to: string; user_id: string; channel_id: string };
export const NO_FILTERS: Filters = { key_id: '', model: '', status: '', from: '', to: '', user_id: '', channel_id: '' };
const STATUSES = ['ok', 'failed', 'refused', 'aborted'];

/** The query string the call log routes take (empty filters left out). */
export function filterQuery(filters: Filters): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) {
    if (!value) continue;
    query.set(name, name === 'from' || name === 'to' ? String(Math.floor(new Date(value).getTime() / 1000)) : value);
  }
  return query;
}

export function CallFilters({ operator, onApply }: { operator: boolean; onApply: (filters: Filters) => void }) {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const set = (name: keyof Filters) => (event: { target: { value: string } }) => setFilters((f) => ({ ...f, [name]: event.target.value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onApply(filters);
  };
  const clear = () => {
    setFilters(NO_FILTERS);
    onApply(NO_FILTERS);
  };
  return (
    <form className="inline-form call-filters" aria-label="Filter calls" onSubmit={submit}>
      {operator && <AccountPicker value={filters.user_id} onChange={(user_id) => setFilters((f) => ({ ...f, user_id, key_id: '' }))} />}
      <KeyPicker operator={operator} userId={filters.user_id} value={filters.key_id} onChange={set('key_id')} />
      {operator && <ChannelPicker value={filters.channel_id} onChange={set('channel_id')} />}
      <label>
        Model
        <input value={filters.model} maxLength={200} onChange={set('model')} />
      </label>
      <label>
        Status
        <select value={filters.status} onChange={set('status')}>
          <option value="">Any</option>
          {STATUSES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        From
        <input type="datetime-local" value={filters.from} onChange={set('from')} />
      </label>
      <label>
        To
        <input type="datetime-local" value={filters.to} onChange={set('to')} />
      </label>
      <div className="form-actions">
        <button type="submit">Filter</button>
        <button type="button" className="secondary" onClick={clear}>
          Clear
        </button>
      </div>
    </form>
  );
}

function AccountPicker({ value, onChange }: { value: string; onChange: (id: string) => void }) {
  const users = useLoad<{ data: AdminUser[] }>('/admin/users?limit=1000');
  return (
    <label>
      Account
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">All accounts</option>
        {users.data?.data.map((u) => (
          <option key={u.id} value={u.id}>
            {u.name}
          </option>
        ))}
      </select>
    </label>
  );
}

function ChannelPicker({ value, onChange }: { value: string; onChange: (event: { target: { value: string } }) => void }) {
  const channels = useLoad<{ data: Channel[] }>('/admin/channels');
  return (
    <label>
      Channel
      <select value={value} onChange={onChange}>
        <option value="">All channels</option>
        {channels.data?.data.map((c) => (
          <option key={c.id} value={c.id}>
            {c.name}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The holder's keys; for the operator, the chosen account's (none to pick until one is chosen). */
function KeyPicker({ operator, userId, value, onChange }: { operator: boolean; userId: string; value: string; onChange: (event: { target: { value: string } }) => void }) {
  const path = operator ? (userId ? `/admin/keys?user_id=${encodeURIComponent(userId)}` : '') : '/console/api/keys';
  return (
    <label>
      Key
      <select value={value} onChange={onChange} disabled={!path}>
        <option value="">{path ? 'All keys' : 'Pick an account first'}</option>
        {path && <KeyOptions path={path} />}
      </select>
    </label>
  );
}

function KeyOptions({ path }: { path: string }) {
  const keys = useLoad<{ data: Key[] }>(path);
  return (
    <>
      {keys.data?.data.map((k) => (
        <option key={k.id} value={k.id}>
          {k.name}
        </option>
      ))}
    </>
  );
}
