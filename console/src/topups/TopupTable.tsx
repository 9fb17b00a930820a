import { price, when, type Topup } from '../api.ts';
import { Money, StatusBadge, TableRegion } from '../components.tsx';

// Top-ups as a table, the holder's and the operator's (who also sees whose). On a phone each row
// stacks into labelled lines (the `stack` table style).

export function TopupTable({ rows, operator }: { rows: Topup[]; operator: boolean }) {
  return (
    <TableRegion label="Top-ups">
      <table className="stack">
        <thead>
          <tr>
            <th scope="col">Started</th>
            {operator && <th scope="col">Account</th>}
            <th scope="col">Amount</th>
            <th scope="col">Paid with</th>
            <th scope="col">Status</th>
            <th scope="col">Taken back</th>
            <th scope="col">Paid at</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id} data-testid={`topup-${row.id}`}>
              <td data-label="Started">{when(row.created_at)}</td>
              {operator && (
                <td data-label="Account">
                  <code className="prefix">{row.user_id}</code>
                </td>
              )}
              <td data-label="Amount">
                <Money value={row.amount} />
              </td>
              <td data-label="Paid with">{price(row.price.amount, row.price.currency)}</td>
              <td data-label="Status">
                <StatusBadge status={row.status} />
              </td>
              <td data-label="Taken back">
                {row.refunded + row.disputed === 0 ? (
                  '—'
                ) : (
                  <>
                    <Money value={row.refunded + row.disputed} />
                    {row.disputed > 0 && <span className="muted"> (dispute)</span>}
                  </>
                )}
              </td>
              <td data-label="Paid at">{row.paid_at === null ? '—' : when(row.paid_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableRegion>
  );
}
