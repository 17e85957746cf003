import { useState, type FormEvent } from 'react';
import type { ProjectView, Scope } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../api.js';
import { Modal } from '../components/Modal.js';
import { LimitFields, limitProblems, limitsInputOf, ModelPicker, NO_LIMITS } from './KeyFields.js';
import { ErrorAlert } from '../components/ErrorAlert';

const SCOPES: { scope: Scope; what: string }[] = [
  { scope: 'model:request', what: 'model calls: chat, embeddings, images, audio, VETTING' },
  { scope: 'utils:crypto', what: 'encrypt and decrypt utilities' },
  { scope: 'agents:execute', what: 'run published agents' },
  { scope: 'mcp:use', what: 'MCP tools at /mcp' },
];

/** The allowed MCP tools as typed (comma- or space-separated `server__tool`, `server__*`); none = every tool. */
const toolsOf = (text: string) => text.split(/[\s,]+/).filter((entry) => entry.length > 0);

export function CreateKeyDialog({ open, onOpenChange, projects }: { open: boolean; onOpenChange: (open: boolean) => void; projects: ProjectView[] }) {
  const [name, setName] = useState('');
  const [project, setProject] = useState('default');
  const [scopes, setScopes] = useState<Scope[]>(['model:request']);
  const [limits, setLimits] = useState(NO_LIMITS);
  const [models, setModels] = useState<string[]>([]);
  const [tools, setTools] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);

  const reset = () => {
    setName('');
    setProject('default');
    setScopes(['model:request']);
    setLimits(NO_LIMITS);
    setModels([]);
    setTools('');
    setError(null);
    setSecret(null);
    setCopied(false);
  };

  const invalid = name.trim() === '' || scopes.length === 0 || Object.keys(limitProblems(limits)).length > 0;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const created = await adminApi.keys.create({
        name: name.trim(),
        project,
        scopes,
        limits: limitsInputOf(limits),
        allowed_models: models.length === 0 ? null : models,
        ...(scopes.includes('mcp:use') && toolsOf(tools).length > 0 ? { allowed_tools: toolsOf(tools) } : {}),
      });
      setSecret(created.secret);
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : String(failure));
    }
  };

  return (
    <Modal
      open={open}
      title={secret === null ? 'Create a key' : 'Key created'}
      onOpenChange={(next) => {
        if (!next) reset();
        onOpenChange(next);
      }}
    >
      {secret !== null ? (
        <div className="secret">
          <p>
            <strong>Copy the secret now: it is shown only this once.</strong> The gateway keeps only its hash.
          </p>
          <label htmlFor="new-secret">Secret</label>
          <input id="new-secret" readOnly value={secret} onFocus={(event) => event.target.select()} />
          <button
            type="button"
            onClick={() => {
              void navigator.clipboard?.writeText(secret).then(() => setCopied(true));
            }}
          >
            {copied ? 'Copied' : 'Copy secret'}
          </button>
          <span role="status" className="visually-hidden">
            {copied ? 'Secret copied to the clipboard' : ''}
          </span>
        </div>
      ) : (
        <form onSubmit={(event) => void submit(event)} className="key-form">
          <div className="field">
            <label htmlFor="key-name">Name</label>
            <input id="key-name" required maxLength={200} value={name} onChange={(event) => setName(event.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="key-project-new">Project</label>
            <input
              id="key-project-new"
              list="project-ids"
              value={project}
              pattern="[a-z0-9_\-]+"
              aria-describedby="key-project-hint"
              onChange={(event) => setProject(event.target.value)}
            />
            <datalist id="project-ids">
              {projects.map((known) => (
                <option key={known.id} value={known.id} />
              ))}
            </datalist>
            <small id="key-project-hint" className="muted">
              lowercase letters, digits, _ and -; a new name creates the project
            </small>
          </div>
          <fieldset>
            <legend>Scopes</legend>
            {SCOPES.map(({ scope, what }) => (
              <label key={scope} className="check">
                <input
                  type="checkbox"
                  checked={scopes.includes(scope)}
                  onChange={() => setScopes(scopes.includes(scope) ? scopes.filter((other) => other !== scope) : [...scopes, scope])}
                />{' '}
                <code>{scope}</code> <span className="muted">{what}</span>
              </label>
            ))}
            {scopes.length === 0 && <small className="error">Pick at least one scope.</small>}
          </fieldset>
          <LimitFields texts={limits} onChange={setLimits} />
          <ModelPicker selected={models} onChange={setModels} />
          {scopes.includes('mcp:use') && (
            <div className="field">
              <label htmlFor="key-tools">Allowed MCP tools</label>
              <input id="key-tools" value={tools} placeholder="files__read, tickets__*" aria-describedby="key-tools-hint" onChange={(event) => setTools(event.target.value)} />
              <small id="key-tools-hint" className="muted">
                server__tool or server__*, comma-separated; empty: every tool
              </small>
            </div>
          )}
          <ErrorAlert message={error} />
          <div className="dialog-actions">
            <button type="submit" disabled={invalid}>
              Create key
            </button>
          </div>
        </form>
      )}
    </Modal>
  );
}
