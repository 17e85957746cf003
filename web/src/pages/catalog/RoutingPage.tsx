import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RoutingView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../../api.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { SourceCell } from '../../components/SourceCell.js';

/**
 * Routing managed live (docs/routing.md#routing-managed-live): the config file's entries,
 * read-only, and those set here, edited as the routing entry they are (deployments, weights,
 * retries, fallbacks, cooldown, timeouts) and checked as start-up checks them, every problem named.
 */

const ROUTING = ['routing'] as const;
const EXAMPLE = { deployments: [{ provider: 'openai', weight: 1 }], retries: 1, fallbacks: [], cooldown: { failures: 3, windowMs: 60000, durationMs: 30000 }, timeouts: {} };

const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : failure === null ? null : String(failure));

/** The entry as the form edits it: without its model (the form's own field). */
function editable(view: RoutingView): string {
  const { model: _model, ...entry } = view.entry as Record<string, unknown>;
  return JSON.stringify(entry, null, 2);
}

function summary(view: RoutingView): string {
  const entry = view.entry as { deployments?: { name?: string; provider: string; weight?: number }[]; retries?: number; fallbacks?: string[] };
  const deployments = (entry.deployments ?? []).map((deployment) => `${deployment.name ?? deployment.provider} ×${deployment.weight ?? 1}`).join(', ') || 'its own provider';
  return `${deployments}; retries ${entry.retries ?? 0}; fallbacks ${(entry.fallbacks ?? []).join(', ') || 'none'}`;
}

export function RoutingPage() {
  const queries = useQueryClient();
  const routing = useQuery({ queryKey: ROUTING, queryFn: () => adminApi.routing.list() });
  const [model, setModel] = useState('');
  const [text, setText] = useState(JSON.stringify(EXAMPLE, null, 2));
  const [parseError, setParseError] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (entry: Record<string, unknown>) => adminApi.routing.set(model.trim(), entry),
    onSuccess: () => void queries.invalidateQueries({ queryKey: ROUTING }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let entry: unknown;
    try {
      entry = JSON.parse(text);
    } catch (error) {
      setParseError(`The entry is not JSON: ${(error as Error).message}`);
      return;
    }
    setParseError(null);
    save.mutate(entry as Record<string, unknown>);
  };
  return (
    <section>
      <h1>Routing</h1>
      <p className="muted">Entries of the config file are read-only here and win over one set here for the same model. A change is in force on every instance at once.</p>
      <ErrorAlert message={messageOf(routing.error)} />
      <table aria-label="Routing entries">
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Deployments, retries, fallbacks</th>
            <th scope="col">Source</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(routing.data?.data ?? []).map((view) => (
            <tr key={`${view.source} ${view.model}`}>
              <td>{view.model}</td>
              <td>{summary(view)}</td>
              <td>
                <SourceCell entry={view}>{!view.in_force && <span className="muted"> (not in force: the config file routes this model)</span>}</SourceCell>
              </td>
              <td>
                {!view.read_only && (
                  <>
                    <button
                      type="button"
                      className="secondary small"
                      aria-label={`Edit routing of ${view.model}`}
                      onClick={() => {
                        setModel(view.model);
                        setText(editable(view));
                      }}
                    >
                      Edit
                    </button>{' '}
                    <ConfirmButton
                      label={`Remove routing of ${view.model}`}
                      title={`Remove the routing of ${view.model}?`}
                      description="The model is served by its own provider again, on every instance at once."
                      confirmLabel="Remove"
                      danger
                      onConfirm={async () => {
                        await adminApi.routing.remove(view.model);
                        await queries.invalidateQueries({ queryKey: ROUTING });
                      }}
                    />
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form className="filters limits" aria-labelledby="routing-form-title" onSubmit={submit}>
        <h2 id="routing-form-title">Set a routing entry</h2>
        <div className="field">
          <label htmlFor="routing-model">Model</label>
          <input id="routing-model" required value={model} onChange={(event) => setModel(event.target.value)} />
        </div>
        <div className="field wide">
          <label htmlFor="routing-entry">Entry (JSON: deployments, strategy, retries, fallbacks, fallbackOn, cooldown, timeouts)</label>
          <textarea id="routing-entry" rows={14} spellCheck={false} value={text} onChange={(event) => setText(event.target.value)} />
        </div>
        <div className="field actions">
          <button type="submit" disabled={save.isPending}>
            Save routing
          </button>
        </div>
        <ErrorAlert message={parseError ?? messageOf(save.error)} />
        {save.isSuccess && <p role="status">Saved: {save.data.model} is routed so on every instance.</p>}
      </form>
    </section>
  );
}
