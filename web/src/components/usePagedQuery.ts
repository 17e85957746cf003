import { hashKey, useQuery, type QueryKey } from '@tanstack/react-query';
import { useState } from 'react';
import type { ListPage } from '@modelgate/admin-api';

/**
 * One keyset page of a filtered server list, read through the query cache under
 * `[...name, filter, cursor]`. The cursors of the pages shown so far belong to one filter:
 * another filter starts again at its first page. Going on or back keeps the shown page
 * (`stale`) until the next one arrives; a new filter's rows never stand in for its own, so
 * until they come there are none.
 */
export function usePagedQuery<Filter extends object, Row>(name: QueryKey, filter: Filter, fetchPage: (filter: Filter, cursor: string | undefined) => Promise<ListPage<Row>>) {
  const filterHash = hashKey([filter]);
  const [paging, setPaging] = useState<{ filterHash: string; cursors: string[] }>({ filterHash, cursors: [] });
  const cursors = paging.filterHash === filterHash ? paging.cursors : [];
  const cursor = cursors.at(-1);
  const query = useQuery({
    queryKey: [...name, filter, cursor],
    queryFn: () => fetchPage(filter, cursor),
    placeholderData: (previous, previousQuery) => (previousQuery !== undefined && hashKey([previousQuery.queryKey[name.length]]) === filterHash ? previous : undefined),
  });
  const nextCursor = query.data?.next_cursor ?? null;
  return {
    query,
    stale: query.isPlaceholderData,
    page: cursors.length + 1,
    hasPrevious: cursors.length > 0,
    hasMore: !query.isPlaceholderData && query.data?.has_more === true,
    previous: () => setPaging({ filterHash, cursors: cursors.slice(0, -1) }),
    next: () => {
      if (nextCursor !== null) setPaging({ filterHash, cursors: [...cursors, nextCursor] });
    },
  };
}
