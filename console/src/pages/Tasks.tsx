import { useState } from 'react';
import { money, when, type Attempt, type TaskRow } from '../api.ts';
import { ErrorNote, Section, StatusBadge, TableRegion } from '../components.tsx';
import { useLoad } from '../hooks.ts';

export function Tasks() {
  const tasks = useLoad<{ data: TaskRow[] }>('/console/api/tasks');
  const [open, setOpen] = useState<string | undefined>();
  return (
    <Section
      title="Tasks"
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
                <span>cost {task.cost === null ? '—' : money(task.cost)}</span>
              </div>
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
            {task.callback && (
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

function Callbacks({ taskId }: { taskId: string }) {
  const attempts = useLoad<{ data: Attempt[] }>(`/console/api/tasks/${taskId}/callbacks`);
  return (
    <TableRegion className="callbacks" label={`Callback attempts of ${taskId}`}>
      <ErrorNote message={attempts.error} />
      {attempts.data?.data.length === 0 && <p className="muted">No attempt yet: callbacks are sent when the task ends.</p>}
      {attempts.data && attempts.data.data.length > 0 && (
        <table>
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
                <td>
                  {a.round} / {a.attempt}
                </td>
                <td>{new Date(a.at).toLocaleString()}</td>
                <td>{a.status_code ?? a.error ?? '—'}</td>
                <td>{a.outcome}</td>
                <td>{a.duration_ms} ms</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </TableRegion>
  );
}
