import { useCallback, useEffect, useState } from 'react';

/**
 * Keyset paging state: the cursor of each page shown so far, reset whenever the filter
 * (its key) changes. Going back pops a cursor; going on pushes the page's next_cursor.
 */
export function useCursorPages(filterKey: string) {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  useEffect(() => setCursors([undefined]), [filterKey]);
  const next = useCallback((cursor: string | null) => {
    if (cursor !== null) setCursors((previous) => [...previous, cursor]);
  }, []);
  const previous = useCallback(() => setCursors((previous) => (previous.length > 1 ? previous.slice(0, -1) : previous)), []);
  return { cursor: cursors[cursors.length - 1], page: cursors.length, next, previous };
}
