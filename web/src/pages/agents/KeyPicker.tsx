import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo } from 'react';
import { adminApi, ApiError } from '../../api.js';
import { activeKeysQuery } from '../key-queries.js';

/** The agent a key is picked for: its slug and project (undefined before its first save). */
export interface PickedFor {
  slug: string;
  projectId: string | undefined;
}

/** The keys of other projects granted the agent; an agent not saved yet has none. */
export function grantsQuery(slug: string) {
  return {
    queryKey: ['agent', slug, 'grants'],
    queryFn: () =>
      adminApi.agents.grants.list(slug).catch((failure: unknown) => {
        if (failure instanceof ApiError && failure.status === 404) return { data: [] };
        throw failure;
      }),
  };
}

/**
 * A drop-down of the keys that may run the agent: the active keys with `agents:execute` of its
 * project and those of other projects it granted (docs/agents.md, "Access"), the first chosen
 * by default: tests are metered against the key, conversations are shown as the key sees them.
 */
export function KeyPicker(props: { id: string; label: string; agent: PickedFor; value: string; onChange: (keyId: string) => void; onError: (message: string) => void }) {
  const { value, onChange, onError } = props;
  const { slug, projectId } = props.agent;
  const active = useQuery(activeKeysQuery);
  const grants = useQuery({ ...grantsQuery(slug), enabled: projectId !== undefined });
  const keys = useMemo(() => {
    if (active.data === undefined || (projectId !== undefined && grants.data === undefined)) return undefined;
    const granted = new Set((grants.data?.data ?? []).map((grant) => grant.key_id));
    return active.data.data.filter((key) => key.scopes.includes('agents:execute') && (projectId === undefined || key.project_id === projectId || granted.has(key.id)));
  }, [active.data, grants.data, projectId]);
  const failure = active.error ?? grants.error;

  useEffect(() => {
    if (keys?.[0] !== undefined && !keys.some((key) => key.id === value)) onChange(keys[0].id);
  }, [keys, value, onChange]);
  useEffect(() => {
    if (failure !== null) onError(failure instanceof Error ? failure.message : String(failure));
  }, [failure, onError]);

  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <select id={props.id} value={value} onChange={(event) => onChange(event.target.value)}>
        {keys?.length === 0 && <option value="">no active key with agents:execute may run this agent (give a grant under Publish)</option>}
        {(keys ?? []).map((key) => (
          <option key={key.id} value={key.id}>
            {key.name} ({key.project_id})
          </option>
        ))}
      </select>
    </div>
  );
}
