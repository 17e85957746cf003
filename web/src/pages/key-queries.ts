import { useQueryClient } from '@tanstack/react-query';

/** The query key every list of keys in the cache starts with (the keys page, the pickers). */
export const KEYS = ['keys'] as const;

/**
 * What to call after a change to keys: every list of keys is read again, and so are the teams,
 * which count their keys, and the projects (a new key may have made one).
 */
export function useRefreshKeys(): () => Promise<unknown> {
  const client = useQueryClient();
  return () => Promise.all([KEYS, ['teams'], ['projects']].map((queryKey) => client.invalidateQueries({ queryKey })));
}
