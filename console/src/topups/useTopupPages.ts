import { useCallback, useEffect, useRef, useState } from 'react';
import { api, ApiFailure, type Topup } from '../api.ts';

// Top-ups a page at a time, newest first: the route's `next` cursor goes back as `after`.

type TopupPage = { data: Topup[]; next: string | null };

export function useTopupPages(operator: boolean, userId: string) {
  const [rows, setRows] = useState<Topup[] | undefined>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  // A slow page must not land after a newer filter's answer.
  const generation = useRef(0);

  const load = useCallback(
    async (after: string | null) => {
      const mine = after ? generation.current : ++generation.current;
      const query = new URLSearchParams({ limit: '50' });
      if (after) query.set('after', after);
      if (operator && userId) query.set('user_id', userId);
      setBusy(true);
      try {
        // Each role's route written out, so the console's route check finds both in the API document.
        const page = operator ? await api<TopupPage>('GET', `/admin/topups?${query}`) : await api<TopupPage>('GET', `/console/api/topups?${query}`);
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
    [operator, userId],
  );
  useEffect(() => {
    void load(null);
  }, [load]);
  return { rows, next, error, busy, load };
}
