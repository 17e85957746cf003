import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { adminApi } from '../../api.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { formatTime } from '../../format.js';
import { activeKeysQuery } from '../key-queries.js';
import { messageOf } from '../playground/parts.js';
import { grantsQuery } from './KeyPicker.js';

/**
 * Grants: the keys of other projects that may run the published agent (its own project's
 * keys always may). Given and withdrawn with the admin API's grant routes.
 */
export function GrantsPanel({ slug, projectId }: { slug: string; projectId: string }) {
  const client = useQueryClient();
  const [chosen, setChosen] = useState('');
  const list = useQuery(grantsQuery(slug));
  const active = useQuery(activeKeysQuery);
  // The key pickers of the test and conversations tabs read the same grants.
  const refresh = () => client.invalidateQueries({ queryKey: grantsQuery(slug).queryKey });
  const grant = useMutation({
    mutationFn: (keyId: string) => adminApi.agents.grants.add(slug, keyId),
    onSuccess: () => {
      setChosen('');
      return refresh();
    },
  });
  const withdraw = useMutation({ mutationFn: (keyId: string) => adminApi.agents.grants.remove(slug, keyId), onSuccess: refresh });
  const failure = list.error ?? active.error ?? grant.error ?? withdraw.error;

  const grants = list.data?.data;
  const keys = (active.data?.data ?? []).filter((key) => key.scopes.includes('agents:execute') && key.project_id !== projectId);
  const granted = new Set((grants ?? []).map((entry) => entry.key_id));
  const grantable = keys.filter((key) => !granted.has(key.id));
  const nameOf = (keyId: string) => keys.find((key) => key.id === keyId)?.name;

  return (
    <section aria-labelledby="grants-title">
      <h2 id="grants-title">Grants</h2>
      <p className="hint">Keys of the project {projectId} may run this agent. A grant lets a key of another project run it too (with agents:execute).</p>
      <ErrorAlert message={failure === null ? null : messageOf(failure)} />
      {grants !== undefined && grants.length === 0 && <p className="hint">No grants.</p>}
      <ul className="grant-list" aria-label="Keys granted">
        {(grants ?? []).map((entry) => (
          <li key={entry.key_id}>
            <code>{entry.key_id}</code> {nameOf(entry.key_id) ?? ''} <span className="hint">since {formatTime(entry.created_at)}</span>{' '}
            <button type="button" className="secondary small" disabled={withdraw.isPending} onClick={() => withdraw.mutate(entry.key_id)}>
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
          if (chosen !== '') grant.mutate(chosen);
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
        <button type="submit" className="small" disabled={chosen === '' || grant.isPending}>
          Grant
        </button>
      </form>
    </section>
  );
}
