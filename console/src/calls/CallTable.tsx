import type { Call } from '../api.ts';
import { Money, StatusBadge, TableRegion } from '../components.tsx';

// One line per call, the columns a reader scans first on the left (on a phone each row becomes a
// labelled block in the same order). The time opens the call's detail.

export const callTime = (iso: string) => new Date(iso).toLocaleString();
export const tokens = (call: Call) =>
  call.usage ? `${(call.usage.input + call.usage.cache_read + call.usage.cache_write).toLocaleString()} in / ${call.usage.output.toLocaleString()} out` : '—';
export const timing = (call: Call) => `${call.latency_ms.toLocaleString()} ms${call.first_token_ms === null ? '' : ` / ${call.first_token_ms.toLocaleString()} ms`}`;

export function CallTable({ rows, operator, open, onOpen }: { rows: Call[]; operator: boolean; open?: string; onOpen: (id: string) => void }) {
  return (
    <TableRegion label="Calls list">
      <table className="stack calls">
        <caption className="visually-hidden">Calls, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Status</th>
            <th scope="col">Model</th>
            <th scope="col">Cost</th>
            <th scope="col">Key</th>
            <th scope="col">Surface</th>
            <th scope="col">Tokens</th>
            <th scope="col">Latency / first token</th>
            {operator && <th scope="col">Channel</th>}
          </tr>
        </thead>
        <tbody>
          {rows.map((call) => (
            <tr key={call.id} data-testid={`call-${call.id}`} className={open === call.id ? 'selected' : undefined} onClick={() => onOpen(call.id)}>
              <td data-label="Time">
                <button type="button" className="link" aria-expanded={open === call.id} aria-controls={open === call.id ? 'call-detail' : undefined} onClick={(e) => (e.stopPropagation(), onOpen(call.id))}>
                  {callTime(call.time)}
                </button>
              </td>
              <td data-label="Status" data-testid="call-status">
                <StatusBadge status={call.status} /> {call.http_status}
              </td>
              <td data-label="Model">{call.model ?? '—'}</td>
              <td data-label="Cost">{call.cost ? <Money value={call.cost.total} /> : '—'}</td>
              <td data-label="Key">{call.key_name ?? call.key_id}</td>
              <td data-label="Surface">{call.surface}</td>
              <td data-label="Tokens">{tokens(call)}</td>
              <td data-label="Latency / first token">{timing(call)}</td>
              {operator && (
                <td data-label="Channel" data-testid="call-channel">
                  {call.channel ? `${call.channel.name} (${call.channel.type})` : '—'}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </TableRegion>
  );
}
