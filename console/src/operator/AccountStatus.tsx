import { api, type AdminUser } from '../api.ts';
import { ErrorNote } from '../components.tsx';
import { useAction } from '../hooks.ts';

// Disables an account (every key of it answers 401 and its console sessions end) or enables it again.

export function AccountStatus({ user, onChange }: { user: AdminUser; onChange: () => Promise<void> }) {
  const action = useAction();
  const disabled = user.status === 'disabled';

  const flip = () =>
    void action.run(async () => {
      if (!disabled && !window.confirm(`Disable ${user.name}? Every key of it stops answering and its console sessions end.`)) return;
      await api('PATCH', `/admin/users/${user.id}`, { status: disabled ? 'active' : 'disabled' });
      await onChange();
    });

  return (
    <div className="inline-form">
      <button type="button" className="secondary" disabled={action.busy} onClick={flip}>
        {disabled ? 'Enable account' : 'Disable account'}
      </button>
      <ErrorNote message={action.error} />
    </div>
  );
}
