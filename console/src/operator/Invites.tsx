import { useState, type FormEvent } from 'react';
import type { Static } from 'typebox';
import type * as SignupSchemas from '../../../src/modules/signup/signup.schemas.ts';
import { api, when } from '../api.ts';
import { ErrorNote, Section, StatusBadge, TableRegion } from '../components.tsx';
import { useAction, useCopy, useLoad } from '../hooks.ts';

// The operator's sign-up invites (SIGNUP=invite): make one, optionally for one email; its code and
// link are shown once (only the hash is kept); the list shows each invite's state; withdraw one.

type Invite = Static<typeof SignupSchemas.Invite>;
type CreatedInvite = Static<typeof SignupSchemas.CreatedInvite>;
type SignupSettings = Static<typeof SignupSchemas.SignupSettings>;

export function Invites() {
  const invites = useLoad<{ data: Invite[] }>('/admin/invites');
  const settings = useLoad<SignupSettings>('/console/api/signup');
  const [email, setEmail] = useState('');
  const [made, setMade] = useState<CreatedInvite | undefined>();
  const copier = useCopy();
  const action = useAction();

  const make = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const created = await api<CreatedInvite>('POST', '/admin/invites', email.trim() ? { email: email.trim() } : {});
      copier.reset();
      setMade(created);
      setEmail('');
      await invites.reload();
    });
  };
  const withdraw = (invite: Invite) =>
    action.run(async () => {
      if (!window.confirm(`Withdraw invite ${invite.id}? It is refused from then on.`)) return;
      await api('DELETE', `/admin/invites/${invite.id}`);
      await invites.reload();
    });

  return (
    <>
      <Section title="New invite">
        {settings.data && settings.data.mode !== 'invite' && (
          <p className="muted" data-testid="signup-mode">
            Sign-up is {settings.data.mode} here (SIGNUP={settings.data.mode}): invites are asked for only when SIGNUP=invite.
          </p>
        )}
        <form className="inline-form" onSubmit={make} aria-label="Make an invite">
          <label>
            For email (empty = anyone)
            <input type="email" maxLength={320} value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <button type="submit" disabled={action.busy}>
            Make invite
          </button>
        </form>
        <ErrorNote message={action.error} />
        {made && (
          <div className="secret" role="status">
            <p>
              <strong>Shown once:</strong> send this link{made.email ? ` to ${made.email}` : ''} now. Only the code's hash is kept, so no one can show it again.
            </p>
            <code className="wrap" data-testid="invite-link">
              {made.link}
            </code>
            <span className="muted">
              code <code data-testid="invite-code">{made.code}</code>
            </span>
            <button type="button" onClick={() => copier.copy(made.link)}>
              {copier.label === 'Copy' ? 'Copy link' : copier.label}
            </button>
            <button type="button" className="secondary" onClick={() => setMade(undefined)}>
              Hide
            </button>
          </div>
        )}
      </Section>
      <Section title="All invites">
        <ErrorNote message={invites.error} />
        <TableRegion label="Invites">
          <table className="stack">
            <thead>
              <tr>
                <th scope="col">Invite</th>
                <th scope="col">For</th>
                <th scope="col">Status</th>
                <th scope="col">Made</th>
                <th scope="col">Expires</th>
                <th scope="col">Account</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {invites.data?.data.map((invite) => (
                <tr key={invite.id} data-testid={`invite-${invite.id}`}>
                  <td data-label="Invite">
                    <code className="prefix">{invite.id}</code>
                  </td>
                  <td data-label="For">{invite.email ?? 'anyone'}</td>
                  <td data-label="Status">
                    <StatusBadge status={invite.status} />
                  </td>
                  <td data-label="Made">{when(invite.created_at)}</td>
                  <td data-label="Expires">{invite.expires_at === null ? 'never' : when(invite.expires_at)}</td>
                  <td data-label="Account">{invite.used_by ? <code className="prefix">{invite.used_by}</code> : ''}</td>
                  <td className="actions">
                    <button type="button" className="danger" disabled={action.busy || invite.status !== 'active'} onClick={() => withdraw(invite)} aria-label={`Withdraw ${invite.id}`}>
                      Withdraw
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {invites.data?.data.length === 0 && <p className="muted">No invites yet.</p>}
        </TableRegion>
      </Section>
    </>
  );
}
