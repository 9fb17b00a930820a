import { useEffect, useRef, useState } from 'react';
import type { DayTotals } from '../api.ts';

export type Series = 'requests' | 'spend' | 'outcomes';

const FONT_PX = 12;
// Roughly the width of one character of the axis font, to keep labels apart without measuring text.
const CHAR_PX = 7.2;

/** The width the chart has on the page, followed as the window changes. */
function useWidth(initial: number) {
  const ref = useRef<HTMLElement>(null);
  const [width, setWidth] = useState(initial);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.max(240, Math.floor(entry!.contentRect.width))));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return { ref, width };
}

/**
 * Plain SVG bars: no chart library for a few dozen bars. Drawn at the pixel width it is shown at
 * (not scaled from a fixed box), so labels keep their size on a phone; fewer day labels fit there.
 */
export function BarChart({ data, series, label, format }: { data: DayTotals[]; series: Series; label: string; format: (value: number) => string }) {
  const { ref, width } = useWidth(720);
  const height = width < 500 ? 200 : 240;
  const stacks = data.map((d) => (series === 'outcomes' ? [d.completed, d.failed] : [series === 'spend' ? d.spend : d.requests]));
  const max = Math.max(series === 'spend' ? 0.01 : 1, ...stacks.map((s) => s.reduce((a, b) => a + b, 0)));
  // A count has no half: its middle line is drawn only when it falls on a whole number.
  const ticks = [0, max / 2, max].filter((v) => series === 'spend' || Number.isInteger(v)).map((value) => ({ value, text: format(value) }));
  const pad = { left: Math.ceil(Math.max(...ticks.map((t) => t.text.length)) * CHAR_PX) + 10, right: 16, top: 12, bottom: 28 };
  const slot = (width - pad.left - pad.right) / Math.max(1, data.length);
  // Every nth day is labelled, counted back from today so the latest day always is.
  const every = Math.max(1, Math.ceil((5 * CHAR_PX + 10) / slot));
  const y = (value: number) => ((height - pad.top - pad.bottom) * value) / max;
  const colours = ['var(--chart-1)', 'var(--chart-2)'];

  return (
    <figure className="chart" ref={ref}>
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={`${label} per day`}>
        {ticks.map((tick) => (
          <g key={tick.value}>
            <line x1={pad.left} x2={width - pad.right} y1={height - pad.bottom - y(tick.value)} y2={height - pad.bottom - y(tick.value)} className="grid" />
            <text x={pad.left - 6} y={height - pad.bottom - y(tick.value) + FONT_PX / 3} textAnchor="end" className="axis">
              {tick.text}
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
                    <title>{`${d.date}: ${format(value)}`}</title>
                  </rect>
                );
              })}
              {(data.length - 1 - i) % every === 0 && (
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
