import { useCallback, useEffect, useRef, useState } from 'react';
import { api, ApiFailure } from './api.ts';

/** GETs a JSON route; `reload` fetches again (after a change the page made). */
export function useLoad<T>(path: string) {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const reload = useCallback(async () => {
    try {
      setData(await api<T>('GET', path));
      setError(undefined);
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  }, [path]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, reload };
}

/** The hash route (#/tasks): the gateway serves one page, the console picks the view. */
export function useHashRoute(): string {
  const read = () => window.location.hash.replace(/^#/, '') || '/';
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** Runs an action, reporting its failure in the page instead of losing it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}

/**
 * Copies text to the clipboard. Browsers allow it only on HTTPS (and localhost): elsewhere the
 * button says so, and the caller shows the text whole for the reader to select.
 */
export function useCopy() {
  const [state, setState] = useState<'idle' | 'copied' | 'blocked'>('idle');
  const copy = useCallback(async (text: string) => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('blocked');
    }
  }, []);
  const label = state === 'copied' ? 'Copied' : state === 'blocked' ? 'Copy blocked: select it' : 'Copy';
  return { state, label, copy, reset: useCallback(() => setState('idle'), []) };
}

/** One page of a list route: its rows and the cursor of the next page (null at the end). */
export type CursorPage<T> = { data: T[]; next: string | null };

/**
 * A list route a page at a time, newest first: `fetchPage` gets the query with `limit` and, for a
 * later page, `after` (the previous page's `next`); it changes when the filters do, which loads the
 * first page again. `load(next)` appends the next page.
 */
export function useCursorPages<T>(fetchPage: (query: URLSearchParams) => Promise<CursorPage<T>>, limit = 50) {
  const [rows, setRows] = useState<T[] | undefined>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  // A slow page must not land after a newer filter's answer.
  const generation = useRef(0);

  const load = useCallback(
    async (after: string | null) => {
      const mine = after ? generation.current : ++generation.current;
      const query = new URLSearchParams({ limit: String(limit) });
      if (after) query.set('after', after);
      setBusy(true);
      try {
        const page = await fetchPage(query);
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
    [fetchPage, limit],
  );
  useEffect(() => {
    void load(null);
  }, [load]);
  return { rows, next, error, busy, load };
}
