import { useCallback } from 'react';
import { api, type Topup } from '../api.ts';
import { useCursorPages, type CursorPage } from '../hooks.ts';

// Top-ups a page at a time, newest first (the operator's filtered by account).

export function useTopupPages(operator: boolean, userId: string) {
  const fetchPage = useCallback(
    (query: URLSearchParams) => {
      if (operator && userId) query.set('user_id', userId);
      // Each role's route written out, so the console's route check finds both in the API document.
      return operator ? api<CursorPage<Topup>>('GET', `/admin/topups?${query}`) : api<CursorPage<Topup>>('GET', `/console/api/topups?${query}`);
    },
    [operator, userId],
  );
  return useCursorPages(fetchPage);
}
