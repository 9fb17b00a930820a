import { useCallback, useEffect, useRef, useState } from 'react';
import { api, ApiFailure, type Call } from '../api.ts';
import { ErrorNote, Section } from '../components.tsx';
import { CallDetail } from './CallDetail.tsx';
import { CallFilters, filterQuery, NO_FILTERS, type Filters } from './CallFilters.tsx';
import { CallTable } from './CallTable.tsx';

// The call log page, the holder's and the operator's: filters, newest first, a page at a time
// (the route's `next` cursor), and one call's detail. The operator's routes add the channel.

const PAGE = 50;

type CallPage = { data: Call[]; next: string | null };

export function CallLog({ operator }: { operator: boolean }) {
  const base = operator ? '/admin/calls' : '/console/api/calls';
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [rows, setRows] = useState<Call[] | undefined>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [open, setOpen] = useState<string | undefined>();
  // A slow first page must not land after a newer filter's answer.
  const generation = useRef(0);

  const load = useCallback(
    async (after: string | null) => {
      const mine = after ? generation.current : ++generation.current;
      const query = filterQuery(filters);
      query.set('limit', String(PAGE));
      if (after) query.set('after', after);
      setBusy(true);
      try {
        // Each role's route written out, so the console's route check finds both in the API document.
        const page = operator ? await api<CallPage>('GET', `/admin/calls?${query}`) : await api<CallPage>('GET', `/console/api/calls?${query}`);
        if (mine !== generation.current) return;
        setRows((old) => (after ? [...(old ?? []), ...page.data] : page.data));
        setNext(page.next);
        setError(undefined);
      } catch (err) {
        if (mine === generation.current) setError(err instanceof ApiFailure ? err.message : String(err));
      } finally {
        setBusy(false);
      }
    },
    [base, filters],
  );
  useEffect(() => {
    void load(null);
  }, [load]);

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
