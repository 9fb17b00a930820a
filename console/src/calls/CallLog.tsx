import { useCallback, useState } from 'react';
import { api, type Call } from '../api.ts';
import { useCursorPages, type CursorPage } from '../hooks.ts';
import { ErrorNote, Section } from '../components.tsx';
import { CallDetail } from './CallDetail.tsx';
import { CallFilters, filterQuery, NO_FILTERS, type Filters } from './CallFilters.tsx';
import { CallTable } from './CallTable.tsx';

// The call log page, the holder's and the operator's: filters, newest first, a page at a time
// (the route's `next` cursor), and one call's detail. The operator's routes add the channel.

const PAGE = 50;

export function CallLog({ operator }: { operator: boolean }) {
  const base = operator ? '/admin/calls' : '/console/api/calls';
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [open, setOpen] = useState<string | undefined>();
  const fetchPage = useCallback(
    (query: URLSearchParams) => {
      for (const [name, value] of filterQuery(filters)) query.set(name, value);
      // Each role's route written out, so the console's route check finds both in the API document.
      return operator ? api<CursorPage<Call>>('GET', `/admin/calls?${query}`) : api<CursorPage<Call>>('GET', `/console/api/calls?${query}`);
    },
    [operator, filters],
  );
  const { rows, next, error, busy, load } = useCursorPages(fetchPage, PAGE);

  return (
    <>
      <Section
        title="Call log"
        actions={
          <button type="button" className="secondary" onClick={() => load(null)}>
            Refresh
          </button>
        }
      >
        {/* A fresh object, so Filter asks again even when nothing changed. */}
        <CallFilters operator={operator} onApply={(f) => setFilters({ ...f })} />
        <ErrorNote message={error} />
        {rows?.length === 0 && <p className="muted">No calls match.</p>}
        {rows && rows.length > 0 && <CallTable rows={rows} operator={operator} open={open} onOpen={setOpen} />}
        {next && (
          <button type="button" className="secondary more" disabled={busy} onClick={() => load(next)}>
            More
          </button>
        )}
      </Section>
      {open && <CallDetail key={open} path={`${base}/${encodeURIComponent(open)}`} operator={operator} onClose={() => setOpen(undefined)} />}
    </>
  );
}
