import { useEffect, useState } from 'react';
import type { ApiKeyView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../../api.js';

/** The agent a key is picked for: its slug and project (undefined before its first save). */
export interface PickedFor {
  slug: string;
  projectId: string | undefined;
}

/**
 * The active keys with `agents:execute` that may run the agent: the keys of its project and
 * those of other projects it granted (docs/agents.md, "Access").
 */
export async function keysThatMayRun(agent: PickedFor): Promise<ApiKeyView[]> {
  const keys = (await adminApi.keys.page({ status: 'active' }, undefined, 100)).data.filter((key) => key.scopes.includes('agents:execute'));
  if (agent.projectId === undefined) return keys;
  const grants = await adminApi.agents.grants.list(agent.slug).then(
    (list) => new Set(list.data.map((grant) => grant.key_id)),
    (failure: unknown) => {
      // An agent not saved yet has no grants.
      if (failure instanceof ApiError && failure.status === 404) return new Set<string>();
      throw failure;
    },
  );
  return keys.filter((key) => key.project_id === agent.projectId || grants.has(key.id));
}

/**
 * A drop-down of the keys that may run the agent, choosing the first by default: tests are
 * metered against the key, conversations are shown as the key sees them.
 */
export function KeyPicker(props: { id: string; label: string; agent: PickedFor; value: string; onChange: (keyId: string) => void; onError: (message: string) => void }) {
  const [keys, setKeys] = useState<ApiKeyView[] | null>(null);
  const { onChange, onError } = props;
  const { slug, projectId } = props.agent;
  useEffect(() => {
    keysThatMayRun({ slug, projectId })
      .then((usable) => {
        setKeys(usable);
        if (usable[0] !== undefined) onChange(usable[0].id);
      })
      .catch((failure: unknown) => onError(failure instanceof Error ? failure.message : String(failure)));
  }, [slug, projectId, onChange, onError]);
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={(event) => onChange(event.target.value)}>
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
