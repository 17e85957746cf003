import { useState, type FormEvent } from 'react';
import type { GuardrailView } from '@modelgate/admin-api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { SelectField, type SelectOption } from '../../components/SelectField';

/**
 * Defines or edits a guardrail stored by the gateway: its check and that check's options, the
 * stages, action, onError and what it attaches to. The entry sent is the one the config file's
 * `guardrails[]` takes, so the gateway's answer names the field at fault. A webhook's key is
 * the name of an environment variable of the gateway: the page never holds a secret.
 */

type Check = GuardrailView['check'];

const CHECKS: { value: Check; label: string }[] = [
  { value: 'pii', label: 'pii (personal data)' },
  { value: 'secrets', label: 'secrets (credentials)' },
  { value: 'keywords', label: 'keywords' },
  { value: 'regex', label: 'regex' },
  { value: 'json_schema', label: 'json_schema (the answer is JSON of a schema)' },
  { value: 'model', label: 'model (a catalog model judges)' },
  { value: 'moderation', label: "moderation (a provider's moderation endpoint)" },
  { value: 'webhook', label: 'webhook' },
];
/** The stages a guardrail checks, as the form's checkboxes and the dry run's select name them. */
export const STAGES: { value: 'input' | 'output'; label: string }[] = [
  { value: 'input', label: 'input (the request)' },
  { value: 'output', label: "output (the model's answer)" },
];
/** What a failed check does, as the form offers it and the list shows it. */
export const ON_ERROR: SelectOption[] = [
  { value: 'closed', label: 'block (closed)' },
  { value: 'open', label: 'let through (open)' },
];
const ACTIONS: SelectOption[] = [
  { value: 'block', label: 'block' },
  { value: 'mask', label: 'mask (replace what matched)' },
  { value: 'log', label: 'log (record only)' },
];
const MODEL_TASKS: SelectOption[] = [
  { value: 'prompt_injection', label: 'prompt injection' },
  { value: 'moderation', label: 'moderation' },
];
const PII_KINDS = ['email', 'phone', 'card', 'iban', 'ip', 'us_ssn', 'uk_nino', 'es_dni'];
/** The checks that judge a whole text: they block or log, never mask. */
const VERDICT_CHECKS: ReadonlySet<Check> = new Set(['json_schema', 'model', 'moderation', 'webhook']);

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
const list = (text: string) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
const text = (value: unknown) => (typeof value === 'string' ? value : '');
const textList = (value: unknown, separator: string) => (Array.isArray(value) ? value.join(separator) : '');

interface OptionTexts {
  kinds: string[];
  entries: string;
  caseSensitive: boolean;
  schema: string;
  model: string;
  task: string;
  provider: string;
  thresholds: string;
  url: string;
  secretEnv: string;
  timeoutMs: string;
}

function optionTextsOf(guardrail: GuardrailView | null): OptionTexts {
  const options = guardrail?.options ?? {};
  const thresholds = (options.thresholds ?? {}) as Record<string, number>;
  return {
    kinds: Array.isArray(options.kinds) ? (options.kinds as string[]) : [...PII_KINDS],
    entries: textList(options.words ?? options.patterns, '\n'),
    caseSensitive: options.caseSensitive === true,
    schema: options.schema === undefined ? '' : JSON.stringify(options.schema, null, 2),
    model: text(options.model),
    task: text(options.task) || 'prompt_injection',
    provider: text(options.provider),
    thresholds: Object.entries(thresholds)
      .map(([category, score]) => `${category}=${score}`)
      .join('\n'),
    url: text(options.url),
    secretEnv: text(options.secretEnv),
    timeoutMs: typeof options.timeoutMs === 'number' ? String(options.timeoutMs) : '',
  };
}

/** The options of `check` from the form's texts; throws a message for a value that does not parse. */
function optionsOf(check: Check, texts: OptionTexts): Record<string, unknown> {
  const timeout = texts.timeoutMs.trim() === '' ? {} : { timeoutMs: Number(texts.timeoutMs) };
  switch (check) {
    case 'pii':
      return { kinds: texts.kinds };
    case 'secrets':
      return {};
    case 'keywords':
      return { words: lines(texts.entries), caseSensitive: texts.caseSensitive };
    case 'regex':
      return { patterns: lines(texts.entries), caseSensitive: texts.caseSensitive };
    case 'json_schema':
      try {
        return { schema: JSON.parse(texts.schema) as unknown };
      } catch {
        throw new Error('The schema is not JSON.');
      }
    case 'model':
      return { model: texts.model.trim(), task: texts.task, ...timeout };
    case 'moderation': {
      const thresholds: Record<string, number> = {};
      for (const line of lines(texts.thresholds)) {
        const [category, score] = line.split('=').map((part) => part.trim());
        if (category === undefined || category === '' || score === undefined || Number.isNaN(Number(score))) throw new Error(`"${line}" is not category=score.`);
        thresholds[category] = Number(score);
      }
      return { provider: texts.provider.trim(), ...(texts.model.trim() === '' ? {} : { model: texts.model.trim() }), thresholds, ...timeout };
    }
    case 'webhook':
      return { url: texts.url.trim(), secretEnv: texts.secretEnv.trim(), ...timeout };
  }
}

function OptionFields({ check, texts, set }: { check: Check; texts: OptionTexts; set: (change: Partial<OptionTexts>) => void }) {
  const field = (id: string, label: string, value: string, key: keyof OptionTexts, extra: { placeholder?: string; help?: string; required?: boolean } = {}) => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} value={value} required={extra.required} placeholder={extra.placeholder} onChange={(event) => set({ [key]: event.target.value })} aria-describedby={extra.help === undefined ? undefined : `${id}-help`} />
      {extra.help !== undefined && (
        <small id={`${id}-help`} className="muted">
          {extra.help}
        </small>
      )}
    </div>
  );
  switch (check) {
    case 'pii':
      return (
        <fieldset className="field">
          <legend>Kinds of personal data</legend>
          {PII_KINDS.map((kind) => (
            <label key={kind}>
              <input type="checkbox" checked={texts.kinds.includes(kind)} onChange={() => set({ kinds: texts.kinds.includes(kind) ? texts.kinds.filter((other) => other !== kind) : [...texts.kinds, kind] })} /> {kind}
            </label>
          ))}
        </fieldset>
      );
    case 'secrets':
      return <p className="muted">Finds the credentials the request log redacts; no options.</p>;
    case 'keywords':
    case 'regex':
      return (
        <>
          <div className="field">
            <label htmlFor="guardrail-entries">{check === 'keywords' ? 'Words, one per line' : 'Patterns, one per line'}</label>
            <textarea id="guardrail-entries" rows={4} required value={texts.entries} onChange={(event) => set({ entries: event.target.value })} />
          </div>
          <label>
            <input type="checkbox" checked={texts.caseSensitive} onChange={(event) => set({ caseSensitive: event.target.checked })} /> Case sensitive
          </label>
        </>
      );
    case 'json_schema':
      return (
        <div className="field">
          <label htmlFor="guardrail-schema">JSON schema</label>
          <textarea id="guardrail-schema" rows={5} required value={texts.schema} onChange={(event) => set({ schema: event.target.value })} />
        </div>
      );
    case 'model':
      return (
        <>
          {field('guardrail-model', 'Checker model', texts.model, 'model', { required: true, help: 'a chat model of the catalog, called through the gateway' })}
          <SelectField id="guardrail-task" label="Task" value={texts.task} options={MODEL_TASKS} onChange={(task) => set({ task })} />
          {field('guardrail-timeout', 'Timeout (ms)', texts.timeoutMs, 'timeoutMs', { placeholder: '10000' })}
        </>
      );
    case 'moderation':
      return (
        <>
          {field('guardrail-provider', 'Provider', texts.provider, 'provider', { required: true, help: 'a provider instance of the gateway with a moderation endpoint' })}
          {field('guardrail-moderation-model', 'Moderation model', texts.model, 'model', { help: "optional; the provider's own default otherwise" })}
          <div className="field">
            <label htmlFor="guardrail-thresholds">Thresholds, one category=score per line</label>
            <textarea id="guardrail-thresholds" rows={3} value={texts.thresholds} placeholder="violence=0.8" onChange={(event) => set({ thresholds: event.target.value })} aria-describedby="guardrail-thresholds-help" />
            <small id="guardrail-thresholds-help" className="muted">
              a category flags from its score on; the others as the provider flags them
            </small>
          </div>
          {field('guardrail-timeout', 'Timeout (ms)', texts.timeoutMs, 'timeoutMs', { placeholder: '10000' })}
        </>
      );
    case 'webhook':
      return (
        <>
          {field('guardrail-url', 'URL', texts.url, 'url', { required: true, placeholder: 'https://checks.internal/guardrail' })}
          {field('guardrail-secret-env', 'Signing key variable', texts.secretEnv, 'secretEnv', { required: true, placeholder: 'GUARDRAIL_WEBHOOK_KEY', help: "the gateway's environment variable holding the HMAC key" })}
          {field('guardrail-timeout', 'Timeout (ms)', texts.timeoutMs, 'timeoutMs', { placeholder: '5000' })}
        </>
      );
  }
}

export function GuardrailForm({ editing, onSave, onCancel }: { editing: GuardrailView | null; onSave: (entry: Record<string, unknown>) => Promise<unknown>; onCancel: () => void }) {
  const [name, setName] = useState(editing?.name ?? '');
  const [check, setCheck] = useState<Check>(editing?.check ?? 'pii');
  const [texts, setTexts] = useState<OptionTexts>(() => optionTextsOf(editing));
  const [stages, setStages] = useState<('input' | 'output')[]>(editing?.stage ?? ['input']);
  const [action, setAction] = useState<string>(editing?.action ?? 'block');
  const [onError, setOnError] = useState<string>(editing?.on_error ?? 'closed');
  const [all, setAll] = useState(editing?.apply.all ?? false);
  const [keys, setKeys] = useState(editing?.apply.keys.join(', ') ?? '');
  const [projects, setProjects] = useState(editing?.apply.projects.join(', ') ?? '');
  const [models, setModels] = useState(editing?.apply.models.join(', ') ?? '');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const title = editing === null ? 'Define a guardrail' : `Edit ${editing.name}`;

  const toggleStage = (stage: 'input' | 'output') => setStages((current) => (current.includes(stage) ? current.filter((other) => other !== stage) : [...current, stage]));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let entry: Record<string, unknown>;
    try {
      entry = {
        ...(editing === null ? { name: name.trim() } : {}),
        check,
        stage: stages,
        action,
        onError,
        apply: { all, keys: list(keys), projects: list(projects), models: list(models) },
        options: optionsOf(check, texts),
      };
    } catch (failure) {
      setError((failure as Error).message);
      return;
    }
    setBusy(true);
    setError(null);
    onSave(entry)
      .catch((failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)))
      .finally(() => setBusy(false));
  };

  return (
    <form className="filters" aria-labelledby="guardrail-form-title" onSubmit={submit}>
      <h2 id="guardrail-form-title">{title}</h2>
      <div className="field">
        <label htmlFor="guardrail-new-name">Name</label>
        <input id="guardrail-new-name" required pattern="[a-z0-9][a-z0-9_\-]*" disabled={editing !== null} value={name} onChange={(event) => setName(event.target.value)} aria-describedby="guardrail-new-name-help" />
        <small id="guardrail-new-name-help" className="muted">
          lowercase; named in errors and the x-modelgate-guardrails header
        </small>
      </div>
      <SelectField
        id="guardrail-check"
        label="Check"
        value={check}
        options={CHECKS}
        onChange={(value) => {
          setCheck(value as Check);
          if (VERDICT_CHECKS.has(value as Check) && action === 'mask') setAction('block');
          if (value === 'json_schema') setStages(['output']);
        }}
      />
      <OptionFields check={check} texts={texts} set={(change) => setTexts((current) => ({ ...current, ...change }))} />
      <fieldset className="field">
        <legend>Stage</legend>
        {STAGES.map((stage) => (
          <label key={stage.value}>
            <input type="checkbox" checked={stages.includes(stage.value)} onChange={() => toggleStage(stage.value)} /> {stage.label}
          </label>
        ))}
      </fieldset>
      <SelectField
        id="guardrail-action"
        label="Action"
        value={action}
        options={VERDICT_CHECKS.has(check) ? ACTIONS.filter((option) => option.value !== 'mask') : ACTIONS}
        onChange={setAction}
      />
      <SelectField
        id="guardrail-on-error"
        label="On error"
        value={onError}
        options={ON_ERROR}
        onChange={setOnError}
      />
      <fieldset className="field">
        <legend>Attach to</legend>
        <label>
          <input type="checkbox" checked={all} onChange={(event) => setAll(event.target.checked)} /> All traffic
        </label>
        <label htmlFor="guardrail-keys">Key ids (comma-separated)</label>
        <input id="guardrail-keys" value={keys} onChange={(event) => setKeys(event.target.value)} />
        <label htmlFor="guardrail-projects">Projects (comma-separated)</label>
        <input id="guardrail-projects" value={projects} onChange={(event) => setProjects(event.target.value)} />
        <label htmlFor="guardrail-models">Models (comma-separated catalog ids)</label>
        <input id="guardrail-models" value={models} onChange={(event) => setModels(event.target.value)} />
      </fieldset>
      <div className="field actions">
        <button type="submit" disabled={busy}>
          {editing === null ? 'Create guardrail' : 'Save changes'}
        </button>
        {editing !== null && (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      <ErrorAlert message={error} />
    </form>
  );
}
