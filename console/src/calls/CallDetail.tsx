import { useEffect, useRef, type ReactNode } from 'react';
import type { Call } from '../api.ts';
import { ErrorNote, Money, StatusBadge } from '../components.tsx';
import { useLoad } from '../hooks.ts';
import { CallBodies } from './CallBodies.tsx';
import { callTime, timing } from './CallTable.tsx';

// One call whole: what it asked, how it ended, its tokens and what each class cost. A task submit
// names its task (what it held is its cost); the holder's Tasks page shows the task itself. A call
// of a key that logs bodies opens to its request and answer too.

const CLASSES = [
  ['input', 'Input'],
  ['cache_read', 'Cache read'],
  ['cache_write', 'Cache write'],
  ['output', 'Output'],
] as const;

export function CallDetail({ path, operator, onClose }: { path: string; operator: boolean; onClose: () => void }) {
  const call = useLoad<Call>(path);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (call.data) heading.current?.focus();
  }, [call.data]);
  const c = call.data;
  return (
    <section id="call-detail" aria-labelledby="call-detail-title" className="card" data-testid="call-detail">
      <div className="card-head">
        <h2 id="call-detail-title" tabIndex={-1} ref={heading}>
          Call detail
        </h2>
        <button type="button" className="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      <ErrorNote message={call.error} />
      {c && (
        <>
          <dl className="facts">
            <Fact label="Request id">
              <code>{c.id}</code>
            </Fact>
            <Fact label="Time">{callTime(c.time)}</Fact>
            <Fact label="Status">
              <StatusBadge status={c.status} /> HTTP {c.http_status}
            </Fact>
            {c.error && (
              <Fact label="Error">
                <code>{c.error.code}</code> <span data-testid="call-error">{c.error.message}</span>
              </Fact>
            )}
            <Fact label="Model">{c.model ?? '—'}</Fact>
            <Fact label="Surface">{c.surface}</Fact>
            <Fact label="Key">
              {c.key_name ?? '—'} (<code>{c.key_id}</code>)
            </Fact>
            {operator && <Fact label="Account">{c.user_id}</Fact>}
            {operator && <Fact label="Channel">{c.channel ? `${c.channel.name} (${c.channel.type}, ${c.channel.id})` : '—'}</Fact>}
            <Fact label="Latency / first token">{timing(c)}</Fact>
            {c.task_id && (
              <Fact label="Task">{operator ? <code>{c.task_id}</code> : <a href="#/tasks" data-testid="call-task">{c.task_id}</a>}</Fact>
            )}
          </dl>
          <UsageTable call={c} />
          {c.bodies && <CallBodies id={c.id} operator={operator} />}
        </>
      )}
    </section>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function UsageTable({ call }: { call: Call }) {
  if (!call.usage && !call.cost) return <p className="muted">No tokens and no charge.</p>;
  return (
    <table className="usage" data-testid="call-usage">
      <caption>Tokens and cost per class</caption>
      <thead>
        <tr>
          <th scope="col">Class</th>
          <th scope="col">Tokens</th>
          <th scope="col">Cost</th>
        </tr>
      </thead>
      <tbody>
        {call.usage &&
          CLASSES.map(([name, label]) => (
            <tr key={name}>
              <th scope="row">{label}</th>
              <td>{call.usage![name].toLocaleString()}</td>
              <td>{call.cost?.[name] === undefined ? '—' : <Money value={call.cost[name]!} />}</td>
            </tr>
          ))}
        <tr>
          <th scope="row">{call.task_id ? 'Total (held for the task)' : 'Total'}</th>
          <td>{call.usage ? (call.usage.input + call.usage.cache_read + call.usage.cache_write + call.usage.output).toLocaleString() : '—'}</td>
          <td data-testid="call-cost">{call.cost ? <Money value={call.cost.total} /> : '—'}</td>
        </tr>
      </tbody>
    </table>
  );
}
