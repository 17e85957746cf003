import { useState } from 'react';
import { Link } from 'react-router-dom';
import type { AgentRunResponse, TestTraceStep } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../../api.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { formatCount, formatUsd } from '../../format.js';
import { KeyPicker } from './KeyPicker.js';

interface Turn {
  input: string;
  response: AgentRunResponse;
}

function Value({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  return <pre className="trace-value">{typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</pre>;
}

/** What each step read and made, with its model, tokens, cost and time. */
function TraceTable({ steps }: { steps: readonly TestTraceStep[] }) {
  return (
    <ol className="trace" aria-label="Trace">
      {steps.map((step, index) => (
        <li key={index}>
          <details>
            <summary>
              <strong>{step.node}</strong> <span className="muted">{step.type}</span>
              {step.branch !== null && <span className="badge">{step.branch}</span>}
              {step.model !== null && <span> · {step.model}</span>}
              {step.usage !== null && <span> · {formatCount(step.usage.total_tokens)} tokens</span>}
              {step.cost_usd !== null && <span> · {formatUsd(step.cost_usd)}</span>}
              <span className="muted"> · {step.duration_ms} ms</span>
            </summary>
            <dl className="trace-values">
              <dt>input</dt>
              <dd>
                <Value value={step.input} />
              </dd>
              <dt>output</dt>
              <dd>
                <Value value={step.output} />
              </dd>
              {step.usage !== null && (
                <>
                  <dt>tokens</dt>
                  <dd>
                    {step.usage.prompt_tokens} prompt + {step.usage.completion_tokens} completion
                  </dd>
                </>
              )}
              {step.asset_ids.map((assetId) => (
                <dd key={assetId}>
                  <img className="trace-image" src={`/admin/v1/agent-assets/${encodeURIComponent(assetId)}`} alt={`image ${assetId} made by ${step.node}`} />
                </dd>
              ))}
            </dl>
          </details>
        </li>
      ))}
    </ol>
  );
}

/**
 * Runs the saved draft turn by turn as a key the author picks: metered against that key and in
 * the request log under it (marked as a test), like the CLI's `modelgate agents test`.
 */
export function TestPanel({ slug, projectId, draftVersion, unsaved }: { slug: string; projectId: string | undefined; draftVersion: number | null; unsaved: boolean }) {
  const [keyId, setKeyId] = useState('');
  const [input, setInput] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const conversationId = turns.at(-1)?.response.conversation_id;
  const send = async () => {
    if (draftVersion === null) return;
    setBusy(true);
    setError(null);
    try {
      const response = await adminApi.agents.test(slug, { key_id: keyId, input, draft_version: draftVersion, ...(conversationId !== undefined ? { conversation_id: conversationId } : {}) });
      setTurns((current) => [...current, { input, response }]);
      setInput('');
    } catch (failure) {
      setError(failure instanceof ApiError ? `${failure.message} (${failure.code})` : String(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="test-title" className="test-panel">
      <h2 id="test-title">Test draft {draftVersion ?? '—'}</h2>
      {draftVersion === null && <p className="hint">Save the graph first: tests run a saved draft.</p>}
      {unsaved && draftVersion !== null && <p className="hint">The canvas has changes that are not saved; the test runs draft {draftVersion}.</p>}
      <KeyPicker id="test-key" label="Key (metered and logged)" agent={{ slug, projectId }} value={keyId} onChange={setKeyId} onError={setError} />
      <ol className="turns" aria-label="Conversation">
        {turns.map((turn) => (
          <li key={turn.response.run_id}>
            <p className="turn-user">
              <span className="muted">you:</span> {turn.input}
            </p>
            <p className="turn-agent">
              <span className="muted">agent:</span> <output>{turn.response.output.text}</output>
            </p>
            {turn.response.output.attachments.map((attachment) => (
              <img key={attachment.asset_id} className="trace-image" src={`/admin/v1/agent-assets/${encodeURIComponent(attachment.asset_id)}`} alt={`attachment ${attachment.asset_id}`} />
            ))}
            <p className="hint">
              {formatCount(turn.response.usage.total_tokens)} tokens · {turn.response.cost.total_usd === null ? 'cost unknown' : formatUsd(turn.response.cost.total_usd)} · <Link to={`/logs/${turn.response.request_id}`}>request {turn.response.request_id}</Link>
            </p>
            <TraceTable steps={turn.response.trace ?? []} />
          </li>
        ))}
      </ol>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        <div className="field">
          <label htmlFor="test-input">{turns.length === 0 ? 'First message' : 'Next message'}</label>
          <textarea id="test-input" rows={2} value={input} onChange={(event) => setInput(event.target.value)} />
        </div>
        <ErrorAlert message={error} />
        <div className="row-actions">
          <button type="submit" disabled={busy || draftVersion === null || keyId === '' || input.trim() === ''}>
            {busy ? 'Running…' : 'Run test turn'}
          </button>
          <button type="button" className="secondary" disabled={turns.length === 0} onClick={() => setTurns([])}>
            New conversation
          </button>
        </div>
      </form>
    </section>
  );
}
