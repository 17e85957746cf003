import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import type { ApiKeyView } from '@modelgate/admin-api';
import { adminApi } from '../../api.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { SelectField, type SelectOption } from '../../components/SelectField.js';
import { KEYS } from '../key-queries.js';
import { ChatPanel } from './ChatPanel.js';
import { EmbeddingsPanel, ImagesPanel, SpeechPanel } from './MediaPanels.js';
import { messageOf, type PanelProps } from './parts.js';
import { VettingPanel } from './VettingPanel.js';
import './playground.css';

const TABS: readonly { id: string; label: string; panel: (props: PanelProps) => JSX.Element }[] = [
  { id: 'chat', label: 'Chat', panel: ChatPanel },
  { id: 'vetting', label: 'VETTING', panel: VettingPanel },
  { id: 'embeddings', label: 'Embeddings', panel: EmbeddingsPanel },
  { id: 'images', label: 'Images', panel: ImagesPanel },
  { id: 'speech', label: 'Speech', panel: SpeechPanel },
];

/** Active keys that may call models: the calls are made as one of them, which the page never sees the secret of. */
function usable(keys: readonly ApiKeyView[]): ApiKeyView[] {
  return keys.filter((key) => key.status === 'active' && key.scopes.includes('model:request'));
}

const KEYS_SHOWN = 50;
const FIND_DELAY_MS = 250;

/** The picker's choices: the keys found, and the chosen one even when the search no longer finds it. */
function keyOptions(keys: readonly ApiKeyView[] | null, chosen: string): SelectOption[] {
  const found = (keys ?? []).map((key) => ({ value: key.id, label: `${key.name} (${key.fingerprint})` }));
  const first = { value: '', label: keys === null ? 'Loading keys…' : found.length === 0 ? 'No active key found' : 'Pick a key' };
  const kept = chosen !== '' && !found.some((option) => option.value === chosen) ? [{ value: chosen, label: chosen }] : [];
  return [first, ...kept, ...found];
}

/**
 * The playground: every model endpoint tried as a key the administrator picks, through the
 * admin API's relay, so each call is metered, limited and logged as that key's.
 */
export function PlaygroundPage() {
  const [search, setSearch] = useSearchParams();
  const tab = TABS.find((candidate) => candidate.id === search.get('tab')) ?? TABS[0]!;
  const keyId = search.get('key') ?? '';

  const [find, setFind] = useState('');
  const [sought, setSought] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setSought(find.trim()), FIND_DELAY_MS);
    return () => clearTimeout(timer);
  }, [find]);

  const catalog = useQuery({ queryKey: ['models'], queryFn: adminApi.models });
  // The first keys whose name or id matches what is typed (all active keys when nothing is), a moment after typing stops;
  // the choices found so far stay until the next ones come.
  const found = useQuery({
    queryKey: [...KEYS, 'playground', sought],
    queryFn: () => adminApi.keys.page({ status: 'active', q: sought === '' ? undefined : sought }, undefined, KEYS_SHOWN),
    placeholderData: keepPreviousData,
  });
  const keys = useMemo(() => (found.data === undefined ? null : usable(found.data.data)), [found.data]);
  const models = catalog.data?.data ?? null;
  const failure = catalog.error ?? found.error;

  const choose = (changes: Record<string, string>) => {
    const next = new URLSearchParams(search);
    for (const [name, value] of Object.entries(changes)) next.set(name, value);
    setSearch(next, { replace: true });
  };
  const Panel = tab.panel;

  return (
    <section className="playground">
      <div className="page-head">
        <h1>Playground</h1>
        <div className="filters key-picker">
          <div className="field">
            <label htmlFor="playground-find-key">Find a key</label>
            <input id="playground-find-key" type="search" placeholder="name or key_…" value={find} onChange={(event) => setFind(event.target.value)} />
          </div>
          <SelectField
            id="playground-key"
            label="Calls are made as the key"
            value={keyId}
            options={keyOptions(keys, keyId)}
            onChange={(value) => choose({ key: value })}
          />
        </div>
      </div>
      <p className="muted">Each call counts against the key's limits and caps, obeys its allowed models and appears in the request log under it, exactly as a call made with its secret.</p>
      <ErrorAlert message={failure === null ? null : messageOf(failure)} />
      <div role="tablist" aria-label="What to try" className="tabs">
        {TABS.map((candidate) => (
          <button
            key={candidate.id}
            type="button"
            role="tab"
            id={`tab-${candidate.id}`}
            aria-selected={candidate.id === tab.id}
            aria-controls="playground-panel"
            className={candidate.id === tab.id ? 'tab selected' : 'tab'}
            onClick={() => choose({ tab: candidate.id })}
          >
            {candidate.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="playground-panel" aria-labelledby={`tab-${tab.id}`}>
        {keyId === '' && <p className="notice">Pick the key the calls are made as.</p>}
        {models !== null && <Panel key={tab.id} keyId={keyId} models={models} />}
      </div>
    </section>
  );
}
