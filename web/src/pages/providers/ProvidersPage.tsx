import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ProviderInstanceView, ProviderKindView, ProviderTestView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../../api.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { SelectField } from '../../components/SelectField.js';
import { settingsOf, SettingsFields, valuesOf, type FieldValues } from './SettingsFields.js';

/**
 * Providers and their credentials (docs/providers.md#providers-added-live): those of the
 * environment and the config file, read-only with where they come from, and those added here,
 * which can be edited, tested and removed. Every form is generated from the kind's settings
 * schema; a saved secret is shown only as its fingerprint.
 */

const PROVIDERS = ['providers'] as const;
const KINDS = ['provider-kinds'] as const;

const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : failure === null ? null : String(failure));

function testText(result: ProviderTestView): string {
  return result.ok ? `ok: ${result.model} answered in ${result.latency_ms} ms` : `failed after ${result.latency_ms} ms: ${result.error?.code} — ${result.error?.message}`;
}

function AddProviderForm({ kinds }: { kinds: ProviderKindView[] }) {
  const queries = useQueryClient();
  const [kindName, setKindName] = useState(kinds[0]?.kind ?? '');
  const [name, setName] = useState(kinds[0]?.kind ?? '');
  const [values, setValues] = useState<FieldValues>({});
  const kind = kinds.find((candidate) => candidate.kind === kindName);
  const add = useMutation({
    mutationFn: () => adminApi.providers.add({ name: name.trim(), kind: kindName, settings: settingsOf(kind!, values, false) }),
    onSuccess: () => {
      setValues({});
      void queries.invalidateQueries({ queryKey: PROVIDERS });
    },
  });
  const chooseKind = (next: string) => {
    // The name follows the kind until it is typed: a kind's own name gives that vendor its credential.
    if (name === kindName) setName(next);
    setKindName(next);
    setValues({});
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate();
  };
  if (kind === undefined) return null;
  return (
    <form className="filters limits" aria-labelledby="provider-add-title" onSubmit={submit}>
      <h2 id="provider-add-title">Add a provider</h2>
      <SelectField id="provider-kind" label="Kind" value={kindName} options={kinds.map((candidate) => ({ value: candidate.kind, label: candidate.kind }))} onChange={chooseKind} />
      <div className="field">
        <label htmlFor="provider-name">Name</label>
        <input id="provider-name" required pattern="[a-z0-9][a-z0-9_\-]*" value={name} onChange={(event) => setName(event.target.value)} aria-describedby="provider-name-help" />
        <small id="provider-name-help" className="muted">
          the kind&apos;s own name serves its catalog models; another name is a further credential for routing
        </small>
      </div>
      <SettingsFields idPrefix="provider-add" kind={kind} values={values} onChange={setValues} />
      <div className="field actions">
        <button type="submit" disabled={add.isPending}>
          {add.isPending ? 'Adding…' : 'Add provider'}
        </button>
      </div>
      <ErrorAlert message={messageOf(add.error)} />
    </form>
  );
}

function EditProviderForm({ provider, kind, onDone }: { provider: ProviderInstanceView; kind: ProviderKindView; onDone: () => void }) {
  const queries = useQueryClient();
  const [values, setValues] = useState<FieldValues>(() => valuesOf(kind, provider.settings));
  const save = useMutation({
    mutationFn: () => adminApi.providers.update(provider.name, settingsOf(kind, values, true)),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: PROVIDERS });
      onDone();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <form className="filters limits" aria-labelledby="provider-edit-title" onSubmit={submit}>
      <h2 id="provider-edit-title">Edit {provider.name}</h2>
      <SettingsFields idPrefix="provider-edit" kind={kind} values={values} onChange={setValues} saved={Object.fromEntries(provider.credentials.map((credential) => [credential.field, credential.fingerprint]))} />
      <div className="field actions">
        <button type="submit" disabled={save.isPending}>
          Save
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          Cancel
        </button>
      </div>
      <ErrorAlert message={messageOf(save.error)} />
    </form>
  );
}

function ProviderRow({ provider, onEdit, onTested }: { provider: ProviderInstanceView; onEdit: () => void; onTested: (text: string) => void }) {
  const queries = useQueryClient();
  const test = useMutation({
    mutationFn: () => adminApi.providers.test(provider.name),
    onSuccess: (result) => onTested(`${provider.name}: ${testText(result)}`),
    onError: (failure) => onTested(`${provider.name}: ${messageOf(failure)}`),
  });
  return (
    <tr>
      <td>{provider.name}</td>
      <td>{provider.kind}</td>
      <td>
        {provider.origin}
        {provider.read_only && <span className="muted"> (read-only)</span>}
      </td>
      <td>{provider.state}</td>
      <td>{provider.credentials.length === 0 ? '—' : provider.credentials.map((credential) => `${credential.field} ${credential.fingerprint}`).join(', ')}</td>
      <td>
        <button type="button" className="secondary small" aria-label={`Test ${provider.name}`} disabled={test.isPending} onClick={() => test.mutate()}>
          {test.isPending ? 'Testing…' : 'Test'}
        </button>{' '}
        {!provider.read_only && (
          <>
            <button type="button" className="secondary small" aria-label={`Edit ${provider.name}`} onClick={onEdit}>
              Edit
            </button>{' '}
            <ConfirmButton
              label={`Remove ${provider.name}`}
              title={`Remove ${provider.name}?`}
              description="Requests stop reaching it on every instance at once; its credential is deleted."
              confirmLabel="Remove"
              danger
              onConfirm={async () => {
                await adminApi.providers.remove(provider.name);
                await queries.invalidateQueries({ queryKey: PROVIDERS });
              }}
            />
          </>
        )}
      </td>
    </tr>
  );
}

export function ProvidersPage() {
  const providers = useQuery({ queryKey: PROVIDERS, queryFn: () => adminApi.providers.list() });
  const kinds = useQuery({ queryKey: KINDS, queryFn: () => adminApi.providers.kinds(), staleTime: Infinity });
  const [editing, setEditing] = useState<string | null>(null);
  const [tested, setTested] = useState<string | null>(null);
  const editedProvider = providers.data?.data.find((provider) => provider.name === editing);
  const editedKind = kinds.data?.data.find((kind) => kind.kind === editedProvider?.kind);
  return (
    <section>
      <h1>Providers</h1>
      <p className="muted">
        Providers of the environment and the config file are read-only here and win over one added here under the same name. Saved secrets are never shown again, only
        their fingerprints.
      </p>
      <ErrorAlert message={messageOf(providers.error ?? kinds.error)} />
      {providers.isPending ? (
        <p className="loading" role="status">
          Loading…
        </p>
      ) : (
        <table aria-label="Providers">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Source</th>
              <th scope="col">State</th>
              <th scope="col">Credentials</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(providers.data?.data ?? []).map((provider) => (
              <ProviderRow key={provider.name} provider={provider} onEdit={() => setEditing(provider.name)} onTested={setTested} />
            ))}
          </tbody>
        </table>
      )}
      <p role="status">{tested}</p>
      {editedProvider !== undefined && editedKind !== undefined && <EditProviderForm key={editedProvider.name} provider={editedProvider} kind={editedKind} onDone={() => setEditing(null)} />}
      {kinds.data !== undefined && <AddProviderForm kinds={kinds.data.data} />}
    </section>
  );
}
