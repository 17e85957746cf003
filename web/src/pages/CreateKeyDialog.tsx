import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { ProjectView, Scope } from '@modelgate/admin-api';
import { adminApi, ApiError, type NewKeyInput } from '../api.js';
import { Modal } from '../components/Modal.js';
import { DetailFields, detailProblems, detailsInputOf, LimitFields, limitProblems, limitsInputOf, ModelPicker, NO_DETAILS, NO_LIMITS } from './KeyFields.js';
import { ErrorAlert } from '../components/ErrorAlert';
import { useRefreshKeys } from './key-queries.js';
import { parseKeyRows, type KeyRow } from './key-rows.js';

const SCOPES: { scope: Scope; what: string }[] = [
  { scope: 'model:request', what: 'model calls: chat, embeddings, images, audio, VETTING' },
  { scope: 'utils:crypto', what: 'encrypt and decrypt utilities' },
  { scope: 'agents:execute', what: 'run published agents' },
  { scope: 'mcp:use', what: 'MCP tools at /mcp' },
];

/** Keys one dialog creates at most (as `modelgate keys create --count`). */
const MAX_KEYS = 1000;

/** A key made here, its secret kept only until the dialog closes. */
interface CreatedKey {
  id: string;
  name: string;
  secret: string;
  /** From a CSV of keys: the end user kept in its metadata (`endUser`). */
  endUser?: string | null;
}

const csvCell = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

/** The secrets as CSV (id, name, secret; with end_user for keys from a file), the shapes `keys create --count` and `--csv` print. */
function secretsCsv(keys: readonly CreatedKey[], withEndUsers: boolean): string {
  if (withEndUsers) return ['id,name,end_user,secret', ...keys.map((key) => [key.id, key.name, key.endUser ?? '', key.secret].map(csvCell).join(','))].join('\n') + '\n';
  return ['id,name,secret', ...keys.map((key) => [key.id, key.name, key.secret].map(csvCell).join(','))].join('\n') + '\n';
}

/** The allowed MCP tools as typed (comma- or space-separated `server__tool`, `server__*`); none = every tool. */
const toolsOf = (text: string) => text.split(/[\s,]+/).filter((entry) => entry.length > 0);

export function CreateKeyDialog({ open, onOpenChange, projects }: { open: boolean; onOpenChange: (open: boolean) => void; projects: ProjectView[] }) {
  const [name, setName] = useState('');
  const [project, setProject] = useState('default');
  const [scopes, setScopes] = useState<Scope[]>(['model:request']);
  const [limits, setLimits] = useState(NO_LIMITS);
  const [models, setModels] = useState<string[]>([]);
  const [tools, setTools] = useState('');
  const [details, setDetails] = useState(NO_DETAILS);
  const [countText, setCountText] = useState('1');
  // A CSV of keys (name,end_user) in place of a count and a name.
  const [fileRows, setFileRows] = useState<{ file: string; rows: KeyRow[] } | null>(null);
  const [fileProblem, setFileProblem] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  const refresh = useRefreshKeys();
  // One key after another, each its own audited change, as the CLI does; the secrets of those
  // made before a failure stay downloadable, so a failure is part of the result, not thrown.
  const create = useMutation({
    mutationFn: async ({ settings, wanted }: { settings: Omit<NewKeyInput, 'name'> & { metadata: Record<string, string> }; wanted: KeyRow[] }) => {
      const made: CreatedKey[] = [];
      try {
        for (const row of wanted) {
          const metadata = row.endUser === null ? settings.metadata : { ...settings.metadata, endUser: row.endUser };
          const key = await adminApi.keys.create({ ...settings, metadata, name: row.name });
          made.push({ id: key.id, name: key.name, secret: key.secret, endUser: row.endUser });
        }
        return { made, error: null };
      } catch (failure) {
        const reason = failure instanceof ApiError ? failure.message : String(failure);
        return { made, error: made.length === 0 ? reason : `${made.length} of ${wanted.length} keys were created, then: ${reason}` };
      }
    },
    onSuccess: ({ made }) => (made.length > 0 ? refresh() : undefined),
  });
  const created = create.data?.made ?? [];
  const error = create.data?.error ?? null;
  const done = created.length > 0;
  const busy = create.isPending;

  const reset = () => {
    setName('');
    setProject('default');
    setScopes(['model:request']);
    setLimits(NO_LIMITS);
    setModels([]);
    setTools('');
    setDetails(NO_DETAILS);
    setCountText('1');
    setFileRows(null);
    setFileProblem(null);
    create.reset();
    setCopied(false);
  };

  const count = /^\d+$/.test(countText) ? Number(countText) : NaN;
  const countProblem = Number.isInteger(count) && count >= 1 && count <= MAX_KEYS ? null : `a whole number from 1 to ${MAX_KEYS}`;
  const fromFile = fileRows !== null;
  const many = fromFile || (countProblem === null && count > 1);
  const invalid =
    busy ||
    (fromFile ? false : name.trim() === '' || countProblem !== null) ||
    fileProblem !== null ||
    scopes.length === 0 ||
    Object.keys(limitProblems(limits)).length > 0 ||
    Object.keys(detailProblems(details)).length > 0;

  const chooseFile = async (file: File | undefined) => {
    setFileRows(null);
    setFileProblem(null);
    if (file === undefined) return;
    const parsed = parseKeyRows(await file.text(), MAX_KEYS);
    if ('problem' in parsed) setFileProblem(`${file.name}: ${parsed.problem}`);
    else setFileRows({ file: file.name, rows: parsed.rows });
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const settings = {
      project,
      scopes,
      limits: limitsInputOf(limits),
      allowed_models: models.length === 0 ? null : models,
      ...(scopes.includes('mcp:use') && toolsOf(tools).length > 0 ? { allowed_tools: toolsOf(tools) } : {}),
      ...detailsInputOf(details),
    };
    const wanted: KeyRow[] =
      fileRows !== null ? fileRows.rows : Array.from({ length: many ? count : 1 }, (_, index) => ({ name: many ? `${name.trim()}-${index + 1}` : name.trim(), endUser: null }));
    create.mutate({ settings, wanted });
  };

  const secret = created.length === 1 && !many ? created[0]!.secret : null;

  return (
    <Modal
      open={open}
      title={!done ? (many ? 'Create keys' : 'Create a key') : created.length === 1 && !many ? 'Key created' : `${created.length} keys created`}
      onOpenChange={(next) => {
        if (!next) reset();
        onOpenChange(next);
      }}
    >
      {done && secret === null ? (
        <div className="secret">
          <p>
            <strong>Download the secrets now: they are shown only this once.</strong> The gateway keeps only their hashes.
          </p>
          <ErrorAlert message={error} />
          <a
            className="button"
            download={`${fileRows !== null ? fileRows.file.replace(/\.csv$/i, '') : name.trim()}-keys.csv`}
            href={`data:text/csv;charset=utf-8,${encodeURIComponent(secretsCsv(created, fromFile))}`}
          >
            Download {created.length} secrets (CSV)
          </a>
        </div>
      ) : secret !== null ? (
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
        <form onSubmit={submit} className="key-form">
          {!fromFile && (
            <>
              <div className="field">
                <label htmlFor="key-count">How many keys</label>
                <input
                  id="key-count"
                  inputMode="numeric"
                  value={countText}
                  aria-invalid={countProblem !== null}
                  aria-describedby="key-count-hint"
                  onChange={(event) => setCountText(event.target.value.trim())}
                />
                <small id="key-count-hint" className={countProblem !== null ? 'error' : 'muted'}>
                  {countProblem ?? 'several alike for a class or a team, their secrets downloaded once as CSV'}
                </small>
              </div>
              <div className="field">
                <label htmlFor="key-name">{many ? 'Name prefix' : 'Name'}</label>
                <input id="key-name" required maxLength={190} value={name} aria-describedby="key-name-hint" onChange={(event) => setName(event.target.value)} />
                <small id="key-name-hint" className="muted">
                  {many ? `the keys are named ${name.trim() || 'PREFIX'}-1 … ${name.trim() || 'PREFIX'}-${count}` : 'to recognise the key by'}
                </small>
              </div>
            </>
          )}
          <div className="field">
            <label htmlFor="key-csv">Or from a CSV file</label>
            <input id="key-csv" type="file" accept=".csv,text/csv" aria-describedby="key-csv-hint" aria-invalid={fileProblem !== null} onChange={(event) => void chooseFile(event.target.files?.[0])} />
            <small id="key-csv-hint" className={fileProblem !== null ? 'error' : 'muted'}>
              {fileProblem ??
                (fileRows !== null
                  ? `${fileRows.rows.length} ${fileRows.rows.length === 1 ? 'key' : 'keys'} from ${fileRows.file}, the same settings below`
                  : 'one key a line, name,end_user; the end user is kept in the key’s metadata as endUser')}
            </small>
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
          <DetailFields texts={details} onChange={setDetails} />
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
              {busy ? 'Creating…' : fileRows !== null ? `Create ${fileRows.rows.length} keys` : many ? `Create ${count} keys` : 'Create key'}
            </button>
          </div>
        </form>
      )}
    </Modal>
  );
}
