import { QueryClient } from '@tanstack/react-query';
import { ApiError } from './api.js';

/**
 * The dashboard's one query cache: pages read gateway data through `useQuery`, so two pages
 * showing the same list share one fetch and a change invalidates every view of it.
 * A client mistake (4xx) is not retried; it will not get better by asking again.
 */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      refetchOnWindowFocus: false,
      retry: (failures, error) => !(error instanceof ApiError && error.status < 500) && failures < 2,
    },
  },
});
