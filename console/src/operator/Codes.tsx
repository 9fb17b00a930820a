import { api, when, type RedeemCode } from '../api.ts';
import { ErrorNote, Money, Section, StatusBadge, TableRegion } from '../components.tsx';
import { useAction, useLoad } from '../hooks.ts';
import { NewCodes } from './NewCodes.tsx';

// The operator's redemption codes: make a batch, see each code's use, revoke one. The list never
// holds the codes themselves (the server has only their hashes), so a code is named by its id.

function state(code: RedeemCode): string {
  if (code.revoked_at !== null) return 'revoked';
  if (code.expires_at !== null && code.expires_at * 1000 <= Date.now()) return 'expired';
  if (code.redeemed >= code.uses) return 'used';
  return 'active';
}

export function Codes() {
  const codes = useLoad<{ data: RedeemCode[] }>('/admin/codes?limit=1000');
  const action = useAction();
  const revoke = (code: RedeemCode) =>
    action.run(async () => {
      if (!window.confirm(`Revoke code ${code.id}? It is refused from then on; what it credited stays.`)) return;
      await api('DELETE', `/admin/codes/${code.id}`);
      await codes.reload();
    });

  return (
    <>
      <NewCodes onMade={codes.reload} />
      <Section title="All codes">
        <ErrorNote message={codes.error ?? action.error} />
        <TableRegion label="Redemption codes">
          <table className="stack">
            <thead>
              <tr>
                <th scope="col">Code</th>
                <th scope="col">Amount</th>
                <th scope="col">Used</th>
                <th scope="col">Expires</th>
                <th scope="col">Status</th>
                <th scope="col">Note</th>
                <th scope="col">Batch</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {codes.data?.data.map((code) => (
                <tr key={code.id} data-testid={`code-${code.id}`}>
                  <td data-label="Code">
                    <code className="prefix">{code.id}</code>
                  </td>
                  <td data-label="Amount">
                    <Money value={code.amount} />
                  </td>
                  <td data-label="Used" data-testid="code-use">
                    {code.redeemed} / {code.uses}
                  </td>
                  <td data-label="Expires">{code.expires_at === null ? 'never' : when(code.expires_at)}</td>
                  <td data-label="Status">
                    <StatusBadge status={state(code)} />
                  </td>
                  <td data-label="Note">{code.note ?? ''}</td>
                  <td data-label="Batch">
                    <code className="prefix">{code.batch_id}</code>
                  </td>
                  <td className="actions">
                    <button type="button" className="danger" disabled={action.busy || code.revoked_at !== null} onClick={() => revoke(code)} aria-label={`Revoke ${code.id}`}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {codes.data?.data.length === 0 && <p className="muted">No codes yet.</p>}
        </TableRegion>
      </Section>
    </>
  );
}
