import { useCallback, useEffect, useState } from 'react';
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
