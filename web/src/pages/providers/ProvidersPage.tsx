import { useMemo, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import type { ProviderInstanceView, ProviderKindView, ProviderTestView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../../api.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { DataTable } from '../../components/DataTable.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { SelectField } from '../../components/SelectField.js';
import { SourceCell } from '../../components/SourceCell.js';
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

/** A provider's actions: a test call, and for one added here an edit and a removal. */
function ProviderActions({ provider, onEdit, onTested }: { provider: ProviderInstanceView; onEdit: () => void; onTested: (text: string) => void }) {
  const queries = useQueryClient();
  const test = useMutation({
    mutationFn: () => adminApi.providers.test(provider.name),
    onSuccess: (result) => onTested(`${provider.name}: ${testText(result)}`),
    onError: (failure) => onTested(`${provider.name}: ${messageOf(failure)}`),
  });
  return (
    <>
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
    </>
  );
}

const column = createColumnHelper<ProviderInstanceView>();

function providerColumns(onEdit: (name: string) => void, onTested: (text: string) => void) {
  return [
    column.accessor('name', { header: 'Name' }),
    column.accessor('kind', { header: 'Kind' }),
    column.display({ id: 'source', header: 'Source', cell: ({ row: { original } }) => <SourceCell entry={original} /> }),
    column.accessor('state', { header: 'State' }),
    column.accessor('credentials', {
      header: 'Credentials',
      cell: (cell) => (cell.getValue().length === 0 ? '—' : cell.getValue().map((credential) => `${credential.field} ${credential.fingerprint}`).join(', ')),
    }),
    column.display({ id: 'actions', header: 'Actions', cell: ({ row: { original } }) => <ProviderActions provider={original} onEdit={() => onEdit(original.name)} onTested={onTested} /> }),
  ];
}

export function ProvidersPage() {
  const providers = useQuery({ queryKey: PROVIDERS, queryFn: () => adminApi.providers.list() });
  const kinds = useQuery({ queryKey: KINDS, queryFn: () => adminApi.providers.kinds(), staleTime: Infinity });
  const [editing, setEditing] = useState<string | null>(null);
  const [tested, setTested] = useState<string | null>(null);
  // One set of columns for the page's life: a cell renderer made anew would remount its actions.
  const columns = useMemo(() => providerColumns(setEditing, setTested), []);
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
        <DataTable caption="Providers" columns={columns} rows={providers.data?.data ?? []} rowKey={(provider) => provider.name} />
      )}
      <p role="status">{tested}</p>
      {editedProvider !== undefined && editedKind !== undefined && <EditProviderForm key={editedProvider.name} provider={editedProvider} kind={editedKind} onDone={() => setEditing(null)} />}
      {kinds.data !== undefined && <AddProviderForm kinds={kinds.data.data} />}
    </section>
  );
}
