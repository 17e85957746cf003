import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import type { ApiKeyView, PublicModelEntry } from '@modelgate/admin-api';
import { adminApi } from '../../api.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { SelectField } from '../../components/SelectField.js';
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

/**
 * The playground: every model endpoint tried as a key the administrator picks, through the
 * admin API's relay, so each call is metered, limited and logged as that key's.
 */
export function PlaygroundPage() {
  const [search, setSearch] = useSearchParams();
  const [keys, setKeys] = useState<ApiKeyView[] | null>(null);
  const [models, setModels] = useState<PublicModelEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const tab = TABS.find((candidate) => candidate.id === search.get('tab')) ?? TABS[0]!;
  const keyId = search.get('key') ?? '';

  useEffect(() => {
    Promise.all([adminApi.keys.page({ status: 'active' }, undefined, 100), adminApi.models()]).then(
      ([page, catalog]) => {
        setKeys(usable(page.data));
        setModels(catalog.data);
      },
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, []);

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
        {keys !== null && (
          <SelectField
            id="playground-key"
            label="Calls are made as the key"
            value={keyId}
            options={[{ value: '', label: keys.length === 0 ? 'No active key: create one first' : 'Pick a key' }, ...keys.map((key) => ({ value: key.id, label: `${key.name} (${key.fingerprint})` }))]}
            onChange={(value) => choose({ key: value })}
          />
        )}
      </div>
      <p className="muted">Each call counts against the key's limits and caps, obeys its allowed models and appears in the request log under it, exactly as a call made with its secret.</p>
      <ErrorAlert message={error} />
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
