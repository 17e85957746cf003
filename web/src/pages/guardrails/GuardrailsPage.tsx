import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { GuardrailView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../../api.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { ErrorAlert } from '../../components/ErrorAlert';
import { GuardrailForm, ON_ERROR, STAGES } from './GuardrailForm';
import { labelOf, SelectField } from '../../components/SelectField';

/**
 * The gateway's guardrails (docs/guardrails.md): each with its check, stages, action and what
 * it is attached to, where it is defined, a form to define, edit and delete those stored by the
 * gateway, and a dry run of one on a sample text. The config file's are shown read-only.
 */

const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : String(failure));

function attachedTo(apply: GuardrailView['apply']): string {
  if (apply.all) return 'all traffic';
  const parts = [
    apply.keys.length > 0 ? `keys: ${apply.keys.join(', ')}` : null,
    apply.projects.length > 0 ? `projects: ${apply.projects.join(', ')}` : null,
    apply.models.length > 0 ? `models: ${apply.models.join(', ')}` : null,
  ];
  return parts.filter((part) => part !== null).join('; ');
}

function DryRun({ guardrails }: { guardrails: GuardrailView[] }) {
  const [name, setName] = useState(guardrails[0]?.name ?? '');
  const [stage, setStage] = useState<'input' | 'output'>('input');
  const [text, setText] = useState('');
  const run = useMutation({ mutationFn: () => adminApi.guardrails.test(name, { text, stage }) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    run.mutate();
  };
  const result = run.data;
  return (
    <form className="filters" aria-labelledby="guardrail-test-title" onSubmit={submit}>
      <h2 id="guardrail-test-title">Dry run</h2>
      <SelectField id="guardrail-name" label="Guardrail" value={name} options={guardrails.map((guardrail) => ({ value: guardrail.name, label: guardrail.name }))} onChange={setName} />
      <SelectField
        id="guardrail-stage"
        label="Stage"
        value={stage}
        options={STAGES}
        onChange={(value) => setStage(value === 'output' ? 'output' : 'input')}
      />
      <div className="field">
        <label htmlFor="guardrail-text">Sample text</label>
        <textarea id="guardrail-text" rows={5} required value={text} onChange={(event) => setText(event.target.value)} />
      </div>
      <button type="submit" disabled={run.isPending || name === ''}>
        Run check
      </button>
      <ErrorAlert message={run.isError ? messageOf(run.error) : null} />
      {result !== undefined && (
        <div role="status" aria-label="Dry run result">
          <p>
            <strong>{result.outcome}</strong> — {result.matched ? 'matched' : 'nothing found'}, {result.latency_ms.toFixed(2)} ms
          </p>
          {result.masked_text !== null && (
            <>
              <h3>Sent on as</h3>
              <pre>{result.masked_text}</pre>
            </>
          )}
        </div>
      )}
    </form>
  );
}

export function GuardrailsPage() {
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: ['guardrails'], queryFn: () => adminApi.guardrails.list() });
  const guardrails = list.data?.data;
  const [editing, setEditing] = useState<GuardrailView | null>(null);
  // A new form after each save, so its fields start afresh.
  const [formKey, setFormKey] = useState(0);
  const saved = async () => {
    setEditing(null);
    setFormKey((key) => key + 1);
    await queryClient.invalidateQueries({ queryKey: ['guardrails'] });
  };
  return (
    <section aria-labelledby="guardrails-title">
      <div className="page-head">
        <h1 id="guardrails-title">Guardrails</h1>
      </div>
      <p className="muted">
        Checks the gateway runs before and after model calls and MCP tool calls. Those defined here apply to new calls on every instance within about a second; those of the
        config file (<code>guardrails</code>) run first and are changed there.
      </p>
      <ErrorAlert message={list.isError ? messageOf(list.error) : null} />
      <table>
        <caption>Configured guardrails</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Check</th>
            <th scope="col">Stage</th>
            <th scope="col">Action</th>
            <th scope="col">On error</th>
            <th scope="col">Attached to</th>
            <th scope="col">From</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {guardrails?.length === 0 && (
            <tr>
              <td colSpan={8}>No guardrails yet.</td>
            </tr>
          )}
          {guardrails?.map((guardrail) => (
            <tr key={guardrail.name}>
              <td>
                <code>{guardrail.name}</code>
              </td>
              <td>{guardrail.check}</td>
              <td>{guardrail.stage.join(', ')}</td>
              <td>{guardrail.action}</td>
              <td>{labelOf(ON_ERROR, guardrail.on_error)}</td>
              <td>{attachedTo(guardrail.apply)}</td>
              <td>{guardrail.source === 'config' ? 'config file' : 'dashboard'}</td>
              <td>
                {!guardrail.read_only && (
                  <>
                    <button type="button" className="secondary" aria-label={`Edit ${guardrail.name}`} onClick={() => setEditing(guardrail)}>
                      Edit
                    </button>{' '}
                    <ConfirmButton
                      label={`Delete ${guardrail.name}`}
                      title={`Delete the guardrail ${guardrail.name}?`}
                      description="New calls stop being checked by it on every instance within about a second."
                      confirmLabel="Delete"
                      danger
                      onConfirm={async () => {
                        await adminApi.guardrails.remove(guardrail.name);
                        if (editing?.name === guardrail.name) setEditing(null);
                        await queryClient.invalidateQueries({ queryKey: ['guardrails'] });
                      }}
                    />
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <GuardrailForm
        key={editing === null ? `new-${formKey}` : `edit-${editing.name}`}
        editing={editing}
        onSave={async (entry) => {
          await (editing === null ? adminApi.guardrails.create(entry) : adminApi.guardrails.update(editing.name, entry));
          await saved();
        }}
        onCancel={() => setEditing(null)}
      />
      {guardrails !== undefined && guardrails.length > 0 && <DryRun key={guardrails.map((guardrail) => guardrail.name).join(',')} guardrails={guardrails} />}
    </section>
  );
}
