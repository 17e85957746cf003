import { useMemo, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import type { AliasView, ModelSettingView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../../api.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { DataTable } from '../../components/DataTable.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { SelectField } from '../../components/SelectField.js';
import { SourceCell } from '../../components/SourceCell.js';

/**
 * The live catalog (docs/catalog.md#models-managed-live): every model with where it comes from,
 * enabled or disabled, priced and aliased here; the config file's entries are read-only. A change
 * is in GET /v1/models at once, on every instance.
 */

const MODELS = ['catalog-models'] as const;
const ALIASES = ['catalog-aliases'] as const;
const MODES = ['chat', 'embedding', 'image_generation', 'audio_transcription', 'audio_speech'];

const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : failure === null ? null : String(failure));
const priceText = (value: number | null | undefined) => (value === null || value === undefined ? '—' : `$${value}`);
const numberOrNull = (text: string) => (text.trim() === '' ? null : Number(text));

interface Pricing {
  input_per_million: number | null;
  output_per_million: number | null;
  status: string;
  note: string | null;
}

function useInvalidate() {
  const queries = useQueryClient();
  return () => Promise.all([queries.invalidateQueries({ queryKey: MODELS }), queries.invalidateQueries({ queryKey: ALIASES }), queries.invalidateQueries({ queryKey: ['models'] })]);
}

function PriceForm({ model, onDone }: { model: ModelSettingView; onDone: () => void }) {
  const invalidate = useInvalidate();
  const current = ((model.entry as { pricing?: Pricing | null } | null)?.pricing ?? null) as Pricing | null;
  const [input, setInput] = useState(current?.input_per_million?.toString() ?? '');
  const [output, setOutput] = useState(current?.output_per_million?.toString() ?? '');
  const [status, setStatus] = useState(current?.status ?? 'documented');
  const [priceNote, setPriceNote] = useState(current?.note ?? '');
  const [note, setNote] = useState(model.note ?? '');
  const save = useMutation({
    mutationFn: () =>
      adminApi.catalog.set(model.id, {
        ...(model.override ?? {}),
        pricing: { input_per_million: numberOrNull(input), output_per_million: numberOrNull(output), status, note: priceNote.trim() === '' ? null : priceNote },
        note: note.trim() === '' ? null : note,
      }),
    onSuccess: async () => {
      await invalidate();
      onDone();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <form className="filters limits" aria-labelledby="price-title" onSubmit={submit}>
      <h2 id="price-title">Prices of {model.id}</h2>
      <div className="field">
        <label htmlFor="price-input">Input, USD per 1M tokens</label>
        <input id="price-input" inputMode="decimal" value={input} onChange={(event) => setInput(event.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="price-output">Output, USD per 1M tokens</label>
        <input id="price-output" inputMode="decimal" value={output} onChange={(event) => setOutput(event.target.value)} />
      </div>
      <SelectField
        id="price-status"
        label="Pricing status"
        value={status}
        options={['documented', 'short_context', 'docs_inferred', 'starts_at'].map((value) => ({ value, label: value }))}
        onChange={setStatus}
      />
      <div className="field">
        <label htmlFor="price-note">Pricing note</label>
        <input id="price-note" value={priceNote} onChange={(event) => setPriceNote(event.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="price-why">Why (kept with the change)</label>
        <input id="price-why" value={note} onChange={(event) => setNote(event.target.value)} />
      </div>
      <div className="field actions">
        <button type="submit" disabled={save.isPending}>
          Save prices
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          Cancel
        </button>
      </div>
      <ErrorAlert message={messageOf(save.error)} />
    </form>
  );
}

function AddModelForm({ providers }: { providers: string[] }) {
  const invalidate = useInvalidate();
  const [id, setId] = useState('');
  const [provider, setProvider] = useState(providers[0] ?? '');
  const [upstreamId, setUpstreamId] = useState('');
  const [mode, setMode] = useState('chat');
  const [modalities, setModalities] = useState('text');
  const [contextWindow, setContextWindow] = useState('');
  const [maxOutput, setMaxOutput] = useState('');
  const add = useMutation({
    mutationFn: () =>
      adminApi.catalog.set(id.trim(), {
        provider,
        ...(upstreamId.trim() === '' ? {} : { upstreamId: upstreamId.trim() }),
        mode,
        input_modalities: modalities
          .split(',')
          .map((part) => part.trim())
          .filter((part) => part.length > 0),
        context_window: numberOrNull(contextWindow),
        max_output_tokens: numberOrNull(maxOutput),
      }),
    onSuccess: async () => {
      setId('');
      setUpstreamId('');
      await invalidate();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate();
  };
  return (
    <form className="filters limits" aria-labelledby="model-add-title" onSubmit={submit}>
      <h2 id="model-add-title">Add a model</h2>
      <div className="field">
        <label htmlFor="model-id">Model id</label>
        <input id="model-id" required value={id} onChange={(event) => setId(event.target.value)} />
      </div>
      <SelectField id="model-provider" label="Provider" value={provider} options={providers.map((name) => ({ value: name, label: name }))} onChange={setProvider} />
      <div className="field">
        <label htmlFor="model-upstream">Upstream id</label>
        <input id="model-upstream" value={upstreamId} onChange={(event) => setUpstreamId(event.target.value)} placeholder="default: the model id" />
      </div>
      <SelectField id="model-mode" label="Mode" value={mode} options={MODES.map((value) => ({ value, label: value }))} onChange={setMode} />
      <div className="field">
        <label htmlFor="model-modalities">Input modalities</label>
        <input id="model-modalities" value={modalities} onChange={(event) => setModalities(event.target.value)} aria-describedby="model-modalities-help" />
        <small id="model-modalities-help" className="muted">
          comma-separated: text, image, file, pdf, audio
        </small>
      </div>
      <div className="field">
        <label htmlFor="model-context">Context window (tokens)</label>
        <input id="model-context" inputMode="numeric" value={contextWindow} onChange={(event) => setContextWindow(event.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="model-max-output">Max output tokens</label>
        <input id="model-max-output" inputMode="numeric" value={maxOutput} onChange={(event) => setMaxOutput(event.target.value)} />
      </div>
      <div className="field actions">
        <button type="submit" disabled={add.isPending}>
          Add model
        </button>
      </div>
      <ErrorAlert message={messageOf(add.error)} />
    </form>
  );
}

function AliasForm({ models }: { models: string[] }) {
  const invalidate = useInvalidate();
  const [alias, setAlias] = useState('');
  const [target, setTarget] = useState(models[0] ?? '');
  const [kind, setKind] = useState<'service' | 'legacy'>('legacy');
  const save = useMutation({
    mutationFn: () => adminApi.catalog.setAlias(alias.trim(), { target, kind }),
    onSuccess: async () => {
      setAlias('');
      await invalidate();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <form className="filters limits" aria-labelledby="alias-add-title" onSubmit={submit}>
      <h2 id="alias-add-title">Set an alias</h2>
      <div className="field">
        <label htmlFor="alias-name">Alias</label>
        <input id="alias-name" required value={alias} onChange={(event) => setAlias(event.target.value)} />
      </div>
      <SelectField id="alias-target" label="Model" value={target} options={models.map((id) => ({ value: id, label: id }))} onChange={setTarget} />
      <SelectField
        id="alias-kind"
        label="Kind"
        value={kind}
        options={[
          { value: 'legacy', label: 'short name (aliases map)' },
          { value: 'service', label: 'service alias (listed as a model)' },
        ]}
        onChange={(value) => setKind(value as 'service' | 'legacy')}
      />
      <div className="field actions">
        <button type="submit" disabled={save.isPending}>
          Set alias
        </button>
      </div>
      <ErrorAlert message={messageOf(save.error)} />
    </form>
  );
}

/** A model's actions: enable or disable, its prices, and a reset of the setting made here. */
function ModelActions({ model, onPrice, onFailed }: { model: ModelSettingView; onPrice: () => void; onFailed: (message: string | null) => void }) {
  const invalidate = useInvalidate();
  const toggle = useMutation({
    mutationFn: () => adminApi.catalog.set(model.id, { ...(model.override ?? {}), disabled: model.enabled, ...(model.note === null ? {} : { note: model.note }) }),
    onSuccess: async () => {
      onFailed(null);
      await invalidate();
    },
    onError: (failure) => onFailed(messageOf(failure)),
  });
  if (model.read_only) return null;
  return (
    <>
      <button type="button" className="secondary small" aria-label={`${model.enabled ? 'Disable' : 'Enable'} ${model.id}`} disabled={toggle.isPending} onClick={() => toggle.mutate()}>
        {model.enabled ? 'Disable' : 'Enable'}
      </button>{' '}
      {model.enabled && (
        <button type="button" className="secondary small" aria-label={`Prices of ${model.id}`} onClick={onPrice}>
          Prices
        </button>
      )}{' '}
      {model.source === 'stored' && (
        <ConfirmButton
          label={`Reset ${model.id}`}
          title={`Reset ${model.id}?`}
          description="The setting made here is removed on every instance: a shipped model is as shipped again, a model added here is gone."
          confirmLabel="Reset"
          danger
          onConfirm={async () => {
            await adminApi.catalog.reset(model.id);
            await invalidate();
          }}
        />
      )}
    </>
  );
}

const modelColumn = createColumnHelper<ModelSettingView>();

function modelColumns(onPrice: (id: string) => void, onFailed: (message: string | null) => void) {
  return [
    modelColumn.accessor('id', { header: 'Model' }),
    modelColumn.accessor('provider', { header: 'Provider', cell: (cell) => cell.getValue() ?? '—' }),
    modelColumn.accessor('mode', { header: 'Mode', cell: (cell) => cell.getValue() ?? '—' }),
    modelColumn.display({ id: 'state', header: 'State', cell: ({ row: { original } }) => (original.enabled ? (original.listed ? 'listed' : 'enabled, provider not configured') : 'disabled') }),
    modelColumn.display({
      id: 'price',
      header: 'Price in / out per 1M',
      cell: ({ row: { original } }) => {
        const pricing = (original.entry as { pricing?: Pricing | null } | null)?.pricing ?? null;
        return (
          <>
            {pricing === null ? 'no price' : `${priceText(pricing.input_per_million)} / ${priceText(pricing.output_per_million)}`}
            {pricing !== null && pricing.status !== 'documented' && <span className="muted"> ({pricing.status})</span>}
          </>
        );
      },
    }),
    modelColumn.display({
      id: 'source',
      header: 'Source',
      cell: ({ row: { original } }) => <SourceCell entry={original}>{original.note !== null && <div className="muted">{original.note}</div>}</SourceCell>,
    }),
    modelColumn.display({ id: 'actions', header: 'Actions', cell: ({ row: { original } }) => <ModelActions model={original} onPrice={() => onPrice(original.id)} onFailed={onFailed} /> }),
  ];
}

const aliasColumn = createColumnHelper<AliasView>();

/** A stored alias's removal (the config file's are read-only). */
function AliasActions({ alias }: { alias: AliasView }) {
  const invalidate = useInvalidate();
  if (alias.source !== 'stored') return null;
  return (
    <ConfirmButton
      label={`Remove alias ${alias.alias}`}
      title={`Remove the alias ${alias.alias}?`}
      description="Requests naming it are refused on every instance at once."
      confirmLabel="Remove"
      danger
      onConfirm={async () => {
        await adminApi.catalog.removeAlias(alias.alias);
        await invalidate();
      }}
    />
  );
}

const ALIAS_COLUMNS = [
  aliasColumn.accessor('alias', { header: 'Alias' }),
  aliasColumn.accessor('target', { header: 'Model' }),
  aliasColumn.accessor('kind', { header: 'Kind' }),
  aliasColumn.display({ id: 'source', header: 'Source', cell: ({ row: { original } }) => <SourceCell entry={original} /> }),
  aliasColumn.display({ id: 'actions', header: 'Actions', cell: ({ row: { original } }) => <AliasActions alias={original} /> }),
];

export function ModelsPage() {
  const models = useQuery({ queryKey: MODELS, queryFn: () => adminApi.catalog.list() });
  const aliases = useQuery({ queryKey: ALIASES, queryFn: () => adminApi.catalog.aliases() });
  const providers = useQuery({ queryKey: ['providers'], queryFn: () => adminApi.providers.list() });
  const [filter, setFilter] = useState('');
  const [pricing, setPricing] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  // One set of columns for the page's life: a cell renderer made anew would remount its actions.
  const columns = useMemo(() => modelColumns(setPricing, setFailure), []);
  const all = models.data?.data ?? [];
  const shown = all.filter((model) => model.id.includes(filter.trim()));
  const priced = all.find((model) => model.id === pricing);
  const providerNames = [...new Set([...(providers.data?.data ?? []).map((provider) => provider.name), ...all.flatMap((model) => (model.provider === null ? [] : [model.provider]))])].sort();
  return (
    <section>
      <h1>Models and prices</h1>
      <p className="muted">
        The live catalog. Models of the config file are read-only here and win over a setting made here; changes reach GET /v1/models on every instance at once.
      </p>
      <ErrorAlert message={messageOf(models.error ?? aliases.error) ?? failure} />
      <div className="filters">
        <div className="field">
          <label htmlFor="model-filter">Find a model</label>
          <input id="model-filter" type="search" value={filter} onChange={(event) => setFilter(event.target.value)} />
        </div>
      </div>
      {models.isPending ? (
        <p className="loading" role="status">
          Loading…
        </p>
      ) : (
        <DataTable caption="Models" columns={columns} rows={shown} rowKey={(model) => model.id} />
      )}
      {priced !== undefined && <PriceForm key={priced.id} model={priced} onDone={() => setPricing(null)} />}
      <AddModelForm providers={providerNames} />
      <h2>Aliases</h2>
      <DataTable caption="Aliases" columns={ALIAS_COLUMNS} rows={aliases.data?.data ?? []} rowKey={(alias) => alias.alias} />
      <AliasForm models={all.filter((model) => model.enabled).map((model) => model.id)} />
    </section>
  );
}
