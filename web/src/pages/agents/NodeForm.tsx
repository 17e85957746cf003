import { useEffect, useState } from 'react';
import type { ConfigFieldSchema, GraphIssue, NodeTypeSchema, PublicModelEntry } from '@modelgate/admin-api';
import { handlesOf } from './Canvas.js';
import { NEXT, type GraphJson, type GraphNodeJson } from './graph.js';
import { TemplateField } from './TemplateField.js';

/** Problems of one field: `config.model` also owns `config.model…` and `config.outputs[0].name`. */
function problemsOf(issues: readonly GraphIssue[], field: string): GraphIssue[] {
  return issues.filter((issue) => issue.field === field || issue.field.startsWith(`${field}.`) || issue.field.startsWith(`${field}[`));
}

function Problems({ id, issues }: { id: string; issues: readonly GraphIssue[] }) {
  if (issues.length === 0) return null;
  return (
    <ul id={id} className="field-problems" role="alert">
      {issues.map((issue) => (
        <li key={`${issue.field}:${issue.message}`}>
          {issue.field}: {issue.message}
        </li>
      ))}
    </ul>
  );
}

/** JSON typed as text: the graph changes only when the text parses. */
function JsonField(props: { id: string; label: string; value: unknown; onChange: (value: unknown) => void; invalid: boolean; describedBy?: string | undefined }) {
  const shown = props.value === undefined ? '' : JSON.stringify(props.value, null, 2);
  const [text, setText] = useState(shown);
  const [error, setError] = useState<string | null>(null);
  // Undo, redo or another node: show the graph's value again.
  useEffect(() => {
    if (JSON.stringify(safeParse(text)) !== JSON.stringify(props.value)) {
      setText(shown);
      setError(null);
    }
  }, [shown]);
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <textarea
        id={props.id}
        rows={Math.min(10, Math.max(2, text.split('\n').length))}
        value={text}
        aria-invalid={props.invalid || error !== null}
        aria-describedby={props.describedBy}
        onChange={(event) => {
          setText(event.target.value);
          if (event.target.value.trim() === '') {
            setError(null);
            props.onChange(undefined);
            return;
          }
          try {
            props.onChange(JSON.parse(event.target.value));
            setError(null);
          } catch {
            setError('not JSON yet: the graph keeps the last value that parsed');
          }
        }}
      />
      {error !== null && <span className="hint error">{error}</span>}
    </div>
  );
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function ModelField(props: { id: string; field: ConfigFieldSchema; value: unknown; models: readonly PublicModelEntry[]; onChange: (value: string | undefined) => void; invalid: boolean; describedBy?: string | undefined }) {
  const [imagesOnly, setImagesOnly] = useState(false);
  const choices = props.models.filter((model) => model.mode === props.field.mode && (!imagesOnly || model.input_modalities.includes('image')));
  const value = typeof props.value === 'string' ? props.value : '';
  return (
    <div className="field">
      <label htmlFor={props.id}>model</label>
      <select id={props.id} value={value} aria-invalid={props.invalid} aria-describedby={props.describedBy} onChange={(event) => props.onChange(event.target.value === '' ? undefined : event.target.value)}>
        <option value="">choose a model…</option>
        {value !== '' && !choices.some((model) => model.id === value) && <option value={value}>{value} (not in this list)</option>}
        {choices.map((model) => (
          <option key={model.id} value={model.id}>
            {model.id} — takes {model.input_modalities.join(', ')}
          </option>
        ))}
      </select>
      {props.field.mode === 'chat' && (
        <label className="check">
          <input type="checkbox" checked={imagesOnly} onChange={(event) => setImagesOnly(event.target.checked)} /> only models that take images
        </label>
      )}
    </div>
  );
}

interface OutputRow {
  name?: unknown;
  type?: unknown;
  description?: unknown;
}

function OutputsField(props: { id: string; value: unknown; types: readonly string[]; onChange: (value: OutputRow[] | undefined) => void; describedBy?: string | undefined }) {
  const rows: OutputRow[] = Array.isArray(props.value) ? (props.value as OutputRow[]) : [];
  const change = (index: number, row: OutputRow) => props.onChange(rows.map((entry, at) => (at === index ? row : entry)));
  return (
    <fieldset aria-describedby={props.describedBy}>
      <legend>Structured output</legend>
      {rows.map((row, index) => (
        <div className="output-row" key={index}>
          <input
            aria-label={`Output ${index + 1} name`}
            placeholder="name"
            value={typeof row.name === 'string' ? row.name : ''}
            onChange={(event) => change(index, { ...row, name: event.target.value })}
          />
          <select aria-label={`Output ${index + 1} type`} value={typeof row.type === 'string' ? row.type : 'string'} onChange={(event) => change(index, { ...row, type: event.target.value })}>
            {props.types.map((type) => (
              <option key={type}>{type}</option>
            ))}
          </select>
          <input
            aria-label={`Output ${index + 1} description`}
            placeholder="description"
            value={typeof row.description === 'string' ? row.description : ''}
            onChange={(event) => {
              const { description: _old, ...rest } = row;
              change(index, event.target.value === '' ? rest : { ...row, description: event.target.value });
            }}
          />
          <button type="button" className="secondary small" aria-label={`Remove output ${index + 1}`} onClick={() => props.onChange(rows.length === 1 ? undefined : rows.filter((_, at) => at !== index))}>
            ×
          </button>
        </div>
      ))}
      <button type="button" className="secondary small" onClick={() => props.onChange([...rows, { name: '', type: 'string' }])}>
        Add output field
      </button>
    </fieldset>
  );
}

function ConfigField(props: {
  nodeId: string;
  field: ConfigFieldSchema;
  value: unknown;
  issues: readonly GraphIssue[];
  paths: readonly string[];
  models: readonly PublicModelEntry[];
  outputTypes: readonly string[];
  onChange: (value: unknown) => void;
}) {
  const { field, value, onChange } = props;
  const id = `field-${props.nodeId}-${field.name}`;
  const problems = problemsOf(props.issues, `config.${field.name}`);
  const problemsId = problems.length > 0 ? `${id}-problems` : undefined;
  const invalid = problems.length > 0;
  const label = `${field.name}${field.required ? ' (required)' : ''}`;
  const text = typeof value === 'string' ? value : '';
  let control;
  switch (field.kind) {
    case 'model':
      control = <ModelField id={id} field={field} value={value} models={props.models} onChange={onChange} invalid={invalid} describedBy={problemsId} />;
      break;
    case 'template':
      control = <TemplateField id={id} label={label} value={text} paths={props.paths} onChange={(next) => onChange(next === '' ? undefined : next)} invalid={invalid} describedBy={problemsId} rows={field.name === 'system' || field.name === 'text' ? 3 : 2} />;
      break;
    case 'templates':
      control = (
        <TemplateField
          id={id}
          label={`${label}, one per line`}
          value={Array.isArray(value) ? value.join('\n') : ''}
          paths={props.paths}
          onChange={(next) => onChange(next.trim() === '' ? undefined : next.split('\n'))}
          invalid={invalid}
          describedBy={problemsId}
        />
      );
      break;
    case 'tools':
      control = (
        <div className="field">
          <label htmlFor={id}>{`${label}, one per line`}</label>
          <textarea
            id={id}
            rows={3}
            value={Array.isArray(value) ? value.join('\n') : ''}
            aria-invalid={invalid}
            aria-describedby={problemsId}
            onChange={(event) => onChange(event.target.value.trim() === '' ? undefined : event.target.value.split('\n'))}
          />
        </div>
      );
      break;
    case 'boolean':
      control = (
        <div className="field">
          <label htmlFor={id}>{label}</label>
          <select id={id} value={value === true ? 'true' : value === false ? 'false' : ''} aria-invalid={invalid} aria-describedby={problemsId} onChange={(event) => onChange(event.target.value === '' ? undefined : event.target.value === 'true')}>
            <option value="">default ({String(field.default)})</option>
            <option value="true">true</option>
            <option value="false">false</option>
          </select>
        </div>
      );
      break;
    case 'enum':
      control = (
        <div className="field">
          <label htmlFor={id}>{label}</label>
          <select id={id} value={text} aria-invalid={invalid} aria-describedby={problemsId} onChange={(event) => onChange(event.target.value === '' ? undefined : event.target.value)}>
            <option value="">{field.default !== undefined ? `default (${String(field.default)})` : 'choose…'}</option>
            {(field.options ?? []).map((option) => (
              <option key={option}>{option}</option>
            ))}
          </select>
        </div>
      );
      break;
    case 'number':
    case 'integer':
      control = (
        <div className="field">
          <label htmlFor={id}>{label}</label>
          <input
            id={id}
            type="number"
            step={field.kind === 'integer' ? 1 : 'any'}
            min={field.minimum}
            max={typeof field.maximum === 'number' ? field.maximum : undefined}
            value={typeof value === 'number' ? value : ''}
            aria-invalid={invalid}
            aria-describedby={problemsId}
            onChange={(event) => onChange(event.target.value === '' ? undefined : Number(event.target.value))}
          />
        </div>
      );
      break;
    case 'outputs':
      control = <OutputsField id={id} value={value} types={props.outputTypes} onChange={onChange} describedBy={problemsId} />;
      break;
    case 'json':
    case 'value':
      control = <JsonField id={id} label={`${label} (JSON)`} value={value} onChange={onChange} invalid={invalid} describedBy={problemsId} />;
      break;
    default:
      control = (
        <div className="field">
          <label htmlFor={id}>{label}</label>
          <input
            id={id}
            value={text}
            list={field.kind === 'path' ? `${id}-paths` : undefined}
            aria-invalid={invalid}
            aria-describedby={problemsId}
            onChange={(event) => onChange(event.target.value === '' ? undefined : event.target.value)}
          />
          {field.kind === 'path' && (
            <datalist id={`${id}-paths`}>
              {props.paths.map((path) => (
                <option key={path} value={path} />
              ))}
            </datalist>
          )}
        </div>
      );
  }
  return (
    <div className="config-field">
      {control}
      <span className="hint">{field.description}</span>
      <Problems id={`${id}-problems`} issues={problems} />
    </div>
  );
}

/** The links of a node as drop-downs: the same edges the canvas draws, usable from the keyboard. */
function LinkFields(props: { node: GraphNodeJson; graph: GraphJson; handles: readonly string[]; issues: readonly GraphIssue[]; onLink: (handle: string, target: string | null) => void }) {
  const targets = props.graph.nodes.filter((node) => node.id !== props.node.id || props.node.type === 'loop');
  return (
    <fieldset>
      <legend>Links</legend>
      {props.handles.map((handle) => {
        const id = `link-${props.node.id}-${handle}`;
        const current = handle === NEXT ? props.node.next : props.node.branches?.[handle];
        const problems = problemsOf(props.issues, handle === NEXT ? 'next' : `branches.${handle}`);
        return (
          <div className="config-field" key={handle}>
            <div className="field">
              <label htmlFor={id}>{handle === NEXT ? 'next' : `branch ${handle}`}</label>
              <select id={id} value={typeof current === 'string' ? current : ''} aria-invalid={problems.length > 0} onChange={(event) => props.onLink(handle, event.target.value === '' ? null : event.target.value)}>
                <option value="">not linked</option>
                {typeof current === 'string' && !targets.some((node) => node.id === current) && <option value={current}>{current} (missing)</option>}
                {targets.map((node) => (
                  <option key={node.id} value={node.id}>
                    {node.id} ({node.type})
                  </option>
                ))}
              </select>
            </div>
            <Problems id={`${id}-problems`} issues={problems} />
          </div>
        );
      })}
      {props.handles.length === 0 && <p className="hint">An output node ends the run.</p>}
    </fieldset>
  );
}

export interface NodeFormProps {
  node: GraphNodeJson;
  graph: GraphJson;
  schema: NodeTypeSchema | undefined;
  issues: readonly GraphIssue[];
  paths: readonly string[];
  models: readonly PublicModelEntry[];
  outputTypes: readonly string[];
  onConfig: (name: string, value: unknown) => void;
  onLink: (handle: string, target: string | null) => void;
  onRename: (id: string) => void;
}

/** The selected node's settings, generated from the node schema the gateway validates with. */
export function NodeForm(props: NodeFormProps) {
  const { node, schema, issues } = props;
  const [newId, setNewId] = useState(node.id);
  // Problems of the fields drawn below are shown there; any other (a next on an output node, an
  // unknown branch handle, the type) is listed above them.
  const linkFields = handlesOf(schema).map((handle) => (handle === NEXT ? 'next' : `branches.${handle}`));
  const shown = new Set([...linkFields, ...(schema?.config ?? []).map((field) => `config.${field.name}`)]);
  const other = issues.filter((issue) => ![...shown].some((field) => issue.field === field || issue.field.startsWith(`${field}.`) || issue.field.startsWith(`${field}[`)));
  return (
    <section aria-labelledby="node-form-title" className="node-form">
      <h2 id="node-form-title">
        {node.type} node <code>{node.id}</code>
      </h2>
      {schema !== undefined && <p className="hint">{schema.description}</p>}
      <form
        className="rename"
        onSubmit={(event) => {
          event.preventDefault();
          props.onRename(newId);
        }}
      >
        <div className="field">
          <label htmlFor="node-id">Node id</label>
          <input id="node-id" value={newId} onChange={(event) => setNewId(event.target.value)} />
        </div>
        <button type="submit" className="secondary small" disabled={newId === node.id}>
          Rename
        </button>
      </form>
      <Problems id="node-problems" issues={other} />
      {(schema?.config ?? []).map((field) => (
        <ConfigField
          key={`${node.id}-${field.name}`}
          nodeId={node.id}
          field={field}
          value={node.config?.[field.name]}
          issues={issues}
          paths={props.paths.filter((path) => !path.startsWith(`${node.id}.`))}
          models={props.models}
          outputTypes={props.outputTypes}
          onChange={(value) => props.onConfig(field.name, value)}
        />
      ))}
      <LinkFields node={node} graph={props.graph} handles={handlesOf(schema)} issues={issues} onLink={props.onLink} />
    </section>
  );
}
