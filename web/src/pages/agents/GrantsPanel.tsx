import { useCallback, useEffect, useState } from 'react';
import type { ApiKeyView } from '@modelgate/admin-api';
import { adminApi, type AgentGrant } from '../../api.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { formatTime } from '../../format.js';
import { messageOf } from '../playground/parts.js';

/**
 * Grants: the keys of other projects that may run the published agent (its own project's
 * keys always may). Given and withdrawn with the admin API's grant routes.
 */
export function GrantsPanel({ slug, projectId }: { slug: string; projectId: string }) {
  const [grants, setGrants] = useState<AgentGrant[] | null>(null);
  const [keys, setKeys] = useState<ApiKeyView[]>([]);
  const [chosen, setChosen] = useState('');
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(() => {
    Promise.all([adminApi.agents.grants.list(slug), adminApi.keys.page({ status: 'active' }, undefined, 100)])
      .then(([list, page]) => {
        setGrants(list.data);
        setKeys(page.data.filter((key) => key.scopes.includes('agents:execute') && key.project_id !== projectId));
      })
      .catch((failure: unknown) => setError(messageOf(failure)));
  }, [slug, projectId]);
  useEffect(load, [load]);

  const granted = new Set((grants ?? []).map((grant) => grant.key_id));
  const grantable = keys.filter((key) => !granted.has(key.id));
  const nameOf = (keyId: string) => keys.find((key) => key.id === keyId)?.name;
  const change = (call: Promise<unknown>) => {
    setError(null);
    call.then(load, (failure: unknown) => setError(messageOf(failure)));
  };

  return (
    <section aria-labelledby="grants-title">
      <h2 id="grants-title">Grants</h2>
      <p className="hint">Keys of the project {projectId} may run this agent. A grant lets a key of another project run it too (with agents:execute).</p>
      <ErrorAlert message={error} />
      {grants !== null && grants.length === 0 && <p className="hint">No grants.</p>}
      <ul className="grant-list" aria-label="Keys granted">
        {(grants ?? []).map((grant) => (
          <li key={grant.key_id}>
            <code>{grant.key_id}</code> {nameOf(grant.key_id) ?? ''} <span className="hint">since {formatTime(grant.created_at)}</span>{' '}
            <button type="button" className="secondary small" onClick={() => change(adminApi.agents.grants.remove(slug, grant.key_id))}>
              Withdraw
            </button>
          </li>
        ))}
      </ul>
      <form
        className="row-actions"
        aria-label="Give a grant"
        onSubmit={(event) => {
          event.preventDefault();
          if (chosen !== '') change(adminApi.agents.grants.add(slug, chosen).then(() => setChosen('')));
        }}
      >
        <label htmlFor="grant-key" className="visually-hidden">
          Key to grant
        </label>
        <select id="grant-key" value={chosen} onChange={(event) => setChosen(event.target.value)}>
          <option value="">{grantable.length === 0 ? 'no other key to grant' : 'choose a key of another project…'}</option>
          {grantable.map((key) => (
            <option key={key.id} value={key.id}>
              {key.name} ({key.project_id})
            </option>
          ))}
        </select>
        <button type="submit" className="small" disabled={chosen === ''}>
          Grant
        </button>
      </form>
    </section>
  );
}
