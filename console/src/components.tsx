import type { ReactNode } from 'react';
import { exactMoney, money } from './api.ts';

export function ErrorNote({ message }: { message?: string }) {
  if (!message) return null;
  return (
    <p className="error" role="alert">
      {message}
    </p>
  );
}

export function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  const id = `section-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section aria-labelledby={id} className="card">
      <div className="card-head">
        <h2 id={id}>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

export function Stat({ label, value, testId }: { label: string; value: ReactNode; testId?: string }) {
  return (
    <div className="stat">
      <span className="stat-label">{label}</span>
      <span className="stat-value" data-testid={testId}>
        {value}
      </span>
    </div>
  );
}

/** An amount in the billing unit; hovering shows it to the last digit. */
export function Money({ value, testId }: { value: number; testId?: string }) {
  return (
    <span data-money="" data-testid={testId} title={exactMoney(value)}>
      {money(value)}
    </span>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status}`}>{status}</span>;
}

/** A table that may scroll sideways on a narrow screen: a labelled region keyboard users can reach. */
export function TableRegion({ label, className, children }: { label: string; className?: string; children: ReactNode }) {
  return (
    <div className={className ? `table-wrap ${className}` : 'table-wrap'} tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}
