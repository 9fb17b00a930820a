import { useState } from 'react';
import { money, type DayTotals } from '../api.ts';
import { ErrorNote, Section, Stat } from '../components.tsx';
import { useLoad } from '../hooks.ts';

type Series = 'requests' | 'spend' | 'outcomes';

export function Totals() {
  const [days, setDays] = useState(14);
  const stats = useLoad<{ data: DayTotals[] }>(`/admin/stats?days=${days}`);
  const [series, setSeries] = useState<Series>('requests');
  const data = stats.data?.data ?? [];
  const sum = (pick: (d: DayTotals) => number) => data.reduce((total, d) => total + pick(d), 0);

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
          <Stat label="Requests" value={String(sum((d) => d.requests))} />
          <Stat label="Spend" value={money(sum((d) => d.spend))} />
          <Stat label="Tasks completed" value={String(sum((d) => d.completed))} />
          <Stat label="Tasks failed" value={String(sum((d) => d.failed))} />
        </div>
      </Section>
      <Section title="Over time">
        <div className="tabs" role="tablist" aria-label="Chart series">
          {(['requests', 'spend', 'outcomes'] as const).map((s) => (
            <button key={s} type="button" role="tab" aria-selected={series === s} onClick={() => setSeries(s)}>
              {s}
            </button>
          ))}
        </div>
        <BarChart data={data} series={series} />
      </Section>
    </>
  );
}

/** Plain SVG bars: no chart library for a dozen bars, and it scales with the page width. */
function BarChart({ data, series }: { data: DayTotals[]; series: Series }) {
  const width = 720;
  const height = 240;
  const pad = { left: 48, right: 8, top: 12, bottom: 28 };
  const stacks = data.map((d) =>
    series === 'outcomes' ? [d.completed, d.failed] : [series === 'spend' ? d.spend : d.requests],
  );
  const max = Math.max(1, ...stacks.map((s) => s.reduce((a, b) => a + b, 0)));
  const slot = (width - pad.left - pad.right) / Math.max(1, data.length);
  const y = (value: number) => ((height - pad.top - pad.bottom) * value) / max;
  const label = series === 'spend' ? money : (v: number) => String(Math.round(v));
  const colours = ['var(--chart-1)', 'var(--chart-2)'];

  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${series} per day`}>
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line x1={pad.left} x2={width - pad.right} y1={height - pad.bottom - y(max * f)} y2={height - pad.bottom - y(max * f)} className="grid" />
            <text x={pad.left - 6} y={height - pad.bottom - y(max * f) + 4} textAnchor="end" className="axis">
              {label(max * f)}
            </text>
          </g>
        ))}
        {data.map((d, i) => {
          let base = height - pad.bottom;
          return (
            <g key={d.date}>
              {stacks[i]!.map((value, j) => {
                const h = y(value);
                base -= h;
                return (
                  <rect key={j} x={pad.left + i * slot + slot * 0.15} y={base} width={slot * 0.7} height={h} fill={colours[j]}>
                    <title>{`${d.date}: ${label(value)}`}</title>
                  </rect>
                );
              })}
              {(data.length <= 14 || i % Math.ceil(data.length / 14) === 0) && (
                <text x={pad.left + i * slot + slot / 2} y={height - 8} textAnchor="middle" className="axis">
                  {d.date.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      {series === 'outcomes' && (
        <figcaption>
          <span className="swatch swatch-1" /> completed <span className="swatch swatch-2" /> failed
        </figcaption>
      )}
    </figure>
  );
}
