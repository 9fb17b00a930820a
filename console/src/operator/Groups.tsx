import { useState } from 'react';
import { type AdminGroup } from '../api.ts';
import { ErrorNote, Section, TableRegion } from '../components.tsx';
import { useLoad } from '../hooks.ts';
import { GroupForm } from './GroupForm.tsx';

// Customer groups: each account pays its group's prices (the price table times the multiplier, or a
// model's override). `default` is the price table as it is and cannot be changed.

export function Groups() {
  const groups = useLoad<{ data: AdminGroup[] }>('/admin/groups');
  const [editing, setEditing] = useState<AdminGroup | undefined>();

  return (
    <>
      <Section title="Customer groups">
        <ErrorNote message={groups.error} />
        <p className="muted">Move an account to a group on the Accounts page.</p>
        <TableRegion label="Customer groups">
          <table className="stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Multiplier</th>
                <th scope="col">Models</th>
                <th scope="col">Price overrides</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {groups.data?.data.map((group) => (
                <tr key={group.name} data-testid={`group-${group.name}`}>
                  <td data-label="Name">{group.name}</td>
                  <td data-label="Multiplier" data-testid="group-multiplier">
                    × {group.multiplier}
                  </td>
                  <td data-label="Models" className="models">
                    {group.models.length ? group.models.join(', ') : 'all'}
                  </td>
                  <td data-label="Price overrides" title={Object.keys(group.prices).join(', ')}>
                    {Object.keys(group.prices).length}
                  </td>
                  <td className="actions">
                    {group.name !== 'default' && (
                      <button type="button" className="secondary" onClick={() => setEditing({ ...group })} aria-label={`Edit ${group.name}`}>
                        Edit
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      </Section>
      <GroupForm editing={editing} onSaved={groups.reload} />
    </>
  );
}
