import { Fragment, useState } from 'react';
import { type Key } from '../api.ts';
import { ErrorNote, StatusBadge, TableRegion } from '../components.tsx';
import { useLoad } from '../hooks.ts';
import { keySummary, PolicyEditor } from '../KeyPolicy.tsx';

// An account's keys on the operator's Accounts page, with their limits; what the operator sets here
// is the ceiling the account holder may narrow.

export function AccountKeys({ userId, name }: { userId: string; name: string }) {
  const keys = useLoad<{ data: Key[] }>(`/admin/keys?user_id=${encodeURIComponent(userId)}`);
  const [editing, setEditing] = useState<string | undefined>();
  return (
    <>
      <ErrorNote message={keys.error} />
      <TableRegion label={`Keys of ${name}`}>
        <table className="stack">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Status</th>
              <th scope="col">Limits</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data?.data.map((key) => (
              <Fragment key={key.id}>
                <tr data-testid={`admin-key-${key.name}`}>
                  <td data-label="Key">
                    {key.name} <code className="prefix">{key.prefix}…</code>
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={key.status} />
                  </td>
                  <td data-label="Limits" className="policy" data-testid="key-policy">
                    {keySummary(key)}
                  </td>
                  <td className="actions">
                    <button type="button" className="secondary" aria-expanded={editing === key.id} onClick={() => setEditing(editing === key.id ? undefined : key.id)} aria-label={`Limits of ${key.name}`}>
                      Limits
                    </button>
                  </td>
                </tr>
                {editing === key.id && (
                  <tr>
                    <td colSpan={4} className="editor">
                      <PolicyEditor keyItem={key} path={`/admin/keys/${key.id}`} onSaved={keys.reload} />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
        {keys.data?.data.length === 0 && <p className="muted">No keys.</p>}
      </TableRegion>
    </>
  );
}
