import { useState } from 'react';
import { when, type Attempt, type TaskRow } from '../api.ts';
import { ErrorNote, Money, Section, StatusBadge, TableRegion } from '../components.tsx';
import { useLoad } from '../hooks.ts';

export function Tasks() {
  const tasks = useLoad<{ data: TaskRow[] }>('/console/api/tasks');
  const [open, setOpen] = useState<string | undefined>();
  return (
    <Section
      title="Latest tasks"
      actions={
        <button type="button" className="secondary" onClick={() => tasks.reload()}>
          Refresh
        </button>
      }
    >
      <ErrorNote message={tasks.error} />
      {tasks.data?.data.length === 0 && <p className="muted">No tasks yet. Submit one with POST /v1/images/generations.</p>}
      <ul className="task-list">
        {tasks.data?.data.map((task) => (
          <li key={task.id} className="task" data-testid={`task-${task.id}`}>
            <div className="task-main">
              <div className="task-meta">
                <code>{task.id}</code>
                <StatusBadge status={task.status} />
                <span>{task.model}</span>
                <span>{when(task.created)}</span>
                <span>cost {task.cost === null ? '—' : <Money value={task.cost} />}</span>
              </div>
              {task.key && (
                <p className="task-line" data-testid="task-key">
                  <span className="muted">Key</span> {task.key.name} (<code className="prefix">{task.key.prefix}…</code>)
                </p>
              )}
              {task.prompt && (
                <p className="task-prompt" data-testid="task-prompt">
                  {task.prompt}
                </p>
              )}
              {task.usage && (
                <p className="task-line" data-testid="task-usage">
                  <span className="muted">Tokens</span> {task.usage.input_tokens.toLocaleString()} in, {task.usage.output_tokens.toLocaleString()} out
                </p>
              )}
              <CallbackLine task={task} />
              {task.error && <p className="error-text">{task.error}</p>}
              {task.images.length > 0 && (
                <div className="previews">
                  {task.images.map((url, i) => (
                    <a key={url} href={url} target="_blank" rel="noreferrer">
                      <img src={url} alt={`Result image ${i + 1} of ${task.id}`} loading="lazy" />
                    </a>
                  ))}
                </div>
              )}
              {task.videos.map((url, i) => (
                <a key={url} href={url} target="_blank" rel="noreferrer">
                  Video {i + 1}
                </a>
              ))}
            </div>
            {(task.callback || task.callback_refused) && (
              <button type="button" className="secondary" aria-expanded={open === task.id} onClick={() => setOpen(open === task.id ? undefined : task.id)}>
                Callback attempts
              </button>
            )}
            {open === task.id && <Callbacks taskId={task.id} />}
          </li>
        ))}
      </ul>
    </Section>
  );
}

function CallbackLine({ task }: { task: TaskRow }) {
  if (task.callback_refused) {
    return (
      <p className="task-line error-text" data-testid="task-callback">
        Callback refused, none will be sent: {task.callback_refused.reason} (<code>{task.callback_refused.url}</code>)
      </p>
    );
  }
  if (!task.callback) return null;
  return (
    <p className="task-line muted" data-testid="task-callback">
      Callback to <code>{task.callback}</code>
    </p>
  );
}

function Callbacks({ taskId }: { taskId: string }) {
  const attempts = useLoad<{ data: Attempt[] }>(`/console/api/tasks/${taskId}/callbacks`);
  return (
    <TableRegion className="callbacks" label={`Callback attempts of ${taskId}`}>
      <ErrorNote message={attempts.error} />
      {attempts.data?.data.length === 0 && <p className="muted">No attempt yet: callbacks are sent when the task ends.</p>}
      {attempts.data && attempts.data.data.length > 0 && (
        <table className="stack">
          <caption className="visually-hidden">Callback attempts of {taskId}</caption>
          <thead>
            <tr>
              <th scope="col">Round / attempt</th>
              <th scope="col">At</th>
              <th scope="col">Answer</th>
              <th scope="col">Outcome</th>
              <th scope="col">Time</th>
            </tr>
          </thead>
          <tbody>
            {attempts.data.data.map((a) => (
              <tr key={`${a.round}-${a.attempt}`}>
                <td data-label="Round / attempt">{a.outcome === 'refused' && a.attempt === 0 ? 'at submit' : `${a.round} / ${a.attempt}`}</td>
                <td data-label="At">{new Date(a.at).toLocaleString()}</td>
                <td data-label="Answer">{a.status_code ?? a.error ?? '—'}</td>
                <td data-label="Outcome">
                  <StatusBadge status={a.outcome} />
                </td>
                <td data-label="Time">{a.outcome === 'refused' ? '—' : `${a.duration_ms} ms`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </TableRegion>
  );
}
