import { useState, type FormEvent, type ReactNode } from 'react';
import { Link } from 'react-router-dom';
import type { PublicModelEntry } from '@modelgate/admin-api';
import { ApiError } from '../../api.js';
import { SelectField } from '../../components/SelectField.js';
import type { Snippets } from './snippets.js';
import { requestIdOf } from './relay.js';

/** What the panels of the playground share: the key calls are made as, and the live catalog. */
export interface PanelProps {
  keyId: string;
  models: readonly PublicModelEntry[];
}

/** A model picker of the catalog's models of one mode. */
export function ModelField(props: { id: string; label?: string; models: readonly PublicModelEntry[]; mode: string; value: string; onChange: (value: string) => void }) {
  const options = props.models.filter((model) => model.mode === props.mode).map((model) => ({ value: model.id, label: `${model.id} (${model.owned_by})` }));
  return <SelectField id={props.id} label={props.label ?? 'Model'} value={props.value} options={options} onChange={props.onChange} />;
}

/** The first catalog model of a mode, the picker's starting value. */
export function firstModelOf(models: readonly PublicModelEntry[], mode: string, preferred?: string): string {
  const ofMode = models.filter((model) => model.mode === mode);
  return (ofMode.find((model) => model.id === preferred) ?? ofMode[0])?.id ?? '';
}

/** A number input that may be left empty (the endpoint's default). */
export function OptionalNumber(props: { id: string; label: string; value: string; onChange: (value: string) => void; min: number; max?: number; step?: number }) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <input id={props.id} type="number" inputMode="decimal" min={props.min} max={props.max} step={props.step ?? 1} value={props.value} placeholder="default" onChange={(event) => props.onChange(event.target.value)} />
    </div>
  );
}

export function TextArea(props: { id: string; label: string; value: string; onChange: (value: string) => void; rows?: number; placeholder?: string }) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <textarea id={props.id} rows={props.rows ?? 3} value={props.value} placeholder={props.placeholder} onChange={(event) => props.onChange(event.target.value)} />
    </div>
  );
}

/** The number a field holds, or undefined when it is empty (so the body leaves it out). */
export function numberOf(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}

/** The message of a failed call, as the gateway worded it. */
export function messageOf(failure: unknown): string {
  if (failure instanceof ApiError) return `${failure.message} (${failure.code})`;
  return failure instanceof Error ? failure.message : String(failure);
}

/** One call at a time from a form: its result, whether it runs, and its error. */
export function useCall<T>() {
  const [result, setResult] = useState<T | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  /** The request id of a call that failed, for the link to its log record. */
  const [failedRequestId, setFailedRequestId] = useState<string | null>(null);
  /** A form's submit handler that makes the call. */
  const submitWith = (call: () => Promise<T>) => (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setFailedRequestId(null);
    setResult(null);
    call()
      .then(setResult, (failure: unknown) => {
        setError(messageOf(failure));
        setFailedRequestId(requestIdOf(failure));
      })
      .finally(() => setBusy(false));
  };
  return { result, busy, error, failedRequestId, submitWith };
}

/** A link to the call's record in the request log. */
export function LogLink(props: { requestId: string | null }) {
  if (props.requestId === null) return null;
  return (
    <p className="muted">
      Logged as <Link to={`/logs/${props.requestId}`}>{props.requestId}</Link>
    </p>
  );
}

/** "Show code": the call as curl and as its API's SDK (snippets.ts), each with a copy button. */
export function ShowCode({ snippets }: { snippets: Snippets }) {
  const [open, setOpen] = useState(false);
  const [copied, setCopied] = useState<string | null>(null);
  const block = (name: string, label: string, text: string): ReactNode => (
    <div className="snippet">
      <div className="snippet-head">
        <h3>{label}</h3>
        <button type="button" className="secondary small" onClick={() => void navigator.clipboard?.writeText(text).then(() => setCopied(name))}>
          {copied === name ? 'Copied' : `Copy ${name}`}
        </button>
      </div>
      <pre aria-label={label}>{text}</pre>
    </div>
  );
  return (
    <div className="show-code">
      <button type="button" className="secondary" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'Hide code' : 'Show code'}
      </button>
      {open && (
        <>
          <p className="muted">The same call against the public API. Set MODELGATE_API_KEY to the key's secret: the dashboard never holds it.</p>
          <div className="snippets">
            {block('curl', 'curl', snippets.curl)}
            {block('SDK', snippets.sdkLabel, snippets.sdk)}
          </div>
        </>
      )}
    </div>
  );
}
