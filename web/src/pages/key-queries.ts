import { useQueryClient } from '@tanstack/react-query';
import { adminApi } from '../api.js';

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

/** The first hundred active keys, as the agent pages pick from them. */
export const activeKeysQuery = {
  queryKey: [...KEYS, 'active'],
  queryFn: () => adminApi.keys.page({ status: 'active' }, undefined, 100),
};
