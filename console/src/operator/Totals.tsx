import { useState } from 'react';
import { money, type DayTotals } from '../api.ts';
import { ErrorNote, Money, Section, Stat } from '../components.tsx';
import { useLoad } from '../hooks.ts';
import { BarChart, type Series } from './BarChart.tsx';

// `requests` counts what reached billing (usage rows and task submits): a request refused before
// it (bad key, 402, 429, 400) leaves no row, so the page calls them billed calls, not requests.
const SERIES: { id: Series; label: string }[] = [
  { id: 'requests', label: 'billed calls' },
  { id: 'spend', label: 'spend' },
  { id: 'outcomes', label: 'outcomes' },
];

export function Totals() {
  const [days, setDays] = useState(14);
  const stats = useLoad<{ data: DayTotals[] }>(`/admin/stats?days=${days}`);
  const [series, setSeries] = useState<Series>('requests');
  const data = stats.data?.data ?? [];
  const sum = (pick: (d: DayTotals) => number) => data.reduce((total, d) => total + pick(d), 0);
  const count = (n: number) => n.toLocaleString('en-US');

  return (
    <>
      <Section title={`Last ${days} days`}>
        <label className="inline">
          Range
          <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
            <option value={7}>7 days</option>
            <option value={14}>14 days</option>
            <option value={30}>30 days</option>
            <option value={90}>90 days</option>
          </select>
        </label>
        <ErrorNote message={stats.error} />
        <div className="stats">
          <Stat label="Billed calls" value={count(sum((d) => d.requests))} />
          <Stat label="Spend" value={<Money value={sum((d) => d.spend)} />} />
          <Stat label="Tasks completed" value={count(sum((d) => d.completed))} />
          <Stat label="Tasks failed" value={count(sum((d) => d.failed))} />
        </div>
        <p className="muted note">Billed calls are text calls that were charged and task submits. Requests refused before billing (a bad key, no balance, a rate limit, a malformed body) are not counted.</p>
      </Section>
      <Section title="Over time">
        <div className="tabs" role="tablist" aria-label="Chart series">
          {SERIES.map((s) => (
            <button key={s.id} type="button" role="tab" aria-selected={series === s.id} onClick={() => setSeries(s.id)}>
              {s.label}
            </button>
          ))}
        </div>
        <BarChart data={data} series={series} label={SERIES.find((s) => s.id === series)!.label} format={series === 'spend' ? money : count} />
      </Section>
    </>
  );
}
