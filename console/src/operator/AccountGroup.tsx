import { useEffect, useState, type FormEvent } from 'react';
import { api, type AdminUser } from '../api.ts';
import { ErrorNote } from '../components.tsx';
import { useAction } from '../hooks.ts';

// Moves an account to another customer group: its new calls pay that group's prices within a second.

export function AccountGroup({ user, groups, onChange }: { user: AdminUser; groups: string[]; onChange: () => Promise<void> }) {
  const [group, setGroup] = useState(user.group);
  const action = useAction();
  useEffect(() => setGroup(user.group), [user.group]);
  // The account's own group is listed even before the group list has loaded.
  const names = groups.includes(user.group) ? groups : [user.group, ...groups];

  const move = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      await api('PATCH', `/admin/users/${user.id}`, { group });
      await onChange();
    });
  };

  return (
    <form className="inline-form" onSubmit={move} aria-label={`Group of ${user.name}`}>
      <label>
        Customer group
        <select value={group} onChange={(e) => setGroup(e.target.value)}>
          {names.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" className="secondary" disabled={action.busy || group === user.group}>
        Move
      </button>
      <ErrorNote message={action.error} />
    </form>
  );
}
