import { useState, type FormEvent } from 'react';
import { api, unitName, when, type AdminGroup, type AdminUser } from '../api.ts';
import { ErrorNote, Money, Section } from '../components.tsx';
import { useAction, useLoad } from '../hooks.ts';
import { AccountGroup } from './AccountGroup.tsx';
import { AccountStatus } from './AccountStatus.tsx';
import { AccountKeys } from './AccountKeys.tsx';

export function Accounts() {
  const users = useLoad<{ data: AdminUser[] }>('/admin/users?limit=1000');
  const groups = useLoad<{ data: AdminGroup[] }>('/admin/groups');
  const groupNames = groups.data?.data.map((g) => g.name) ?? [];
  const [name, setName] = useState('');
  const [balance, setBalance] = useState('');
  const action = useAction();

  const create = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      await api('POST', '/admin/users', { name, ...(balance ? { balance: Number(balance) } : {}) });
      setName('');
      setBalance('');
      await users.reload();
    });
  };

  return (
    <>
      <Section title="New account">
        <form className="inline-form" onSubmit={create}>
          <label>
            Name
            <input required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <label>
            Opening balance ({unitName()})
            <input type="number" min="0" step="any" value={balance} onChange={(e) => setBalance(e.target.value)} />
          </label>
          <button type="submit" disabled={action.busy}>
            Create account
          </button>
        </form>
        <ErrorNote message={action.error} />
      </Section>
      <Section title="All accounts">
        <ErrorNote message={users.error ?? groups.error} />
        <ul className="account-list">
          {users.data?.data.map((user) => (
            <AccountRow key={user.id} user={user} groups={groupNames} onChange={users.reload} />
          ))}
        </ul>
      </Section>
    </>
  );
}

function AccountRow({ user, groups, onChange }: { user: AdminUser; groups: string[]; onChange: () => Promise<void> }) {
  const [amount, setAmount] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [saved, setSaved] = useState<string | undefined>();
  const action = useAction();

  const topUp = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      await api('POST', `/admin/users/${user.id}/topup`, { amount: Number(amount) });
      setAmount('');
      await onChange();
    });
  };
  const setCredentials = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      await api('PUT', `/admin/users/${user.id}/console-credentials`, { email, password });
      setSaved(`Console sign-in set for ${email}`);
      setPassword('');
    });
  };

  return (
    <li className="account" data-testid={`account-${user.name}`}>
      <div className="account-head">
        <strong>{user.name}</strong>
        <code>{user.id}</code>
        <span>
          balance <Money value={user.balance} testId="account-balance" />
        </span>
        <span>
          used <Money value={user.used} />
        </span>
        <span data-testid="account-group">group {user.group}</span>
        {user.status === 'disabled' && <strong data-testid="account-disabled">disabled</strong>}
        <span>since {when(user.created_at)}</span>
      </div>
      <div className="account-forms">
        <form className="inline-form" onSubmit={topUp} aria-label={`Top up ${user.name}`}>
          <label>
            Top-up amount ({unitName()})
            <input type="number" min="0" step="any" required value={amount} onChange={(e) => setAmount(e.target.value)} />
          </label>
          <button type="submit" disabled={action.busy}>
            Top up
          </button>
        </form>
        <form className="inline-form" onSubmit={setCredentials} aria-label={`Console sign-in for ${user.name}`}>
          <label>
            Console email
            <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <label>
            Password
            <input type="password" autoComplete="new-password" required minLength={10} value={password} onChange={(e) => setPassword(e.target.value)} />
          </label>
          <button type="submit" className="secondary" disabled={action.busy}>
            Set sign-in
          </button>
        </form>
        <AccountGroup user={user} groups={groups} onChange={onChange} />
        <AccountStatus user={user} onChange={onChange} />
      </div>
      {saved && <p role="status">{saved}</p>}
      <ErrorNote message={action.error} />
      <AccountKeys userId={user.id} name={user.name} />
    </li>
  );
}
