import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import type { GuardrailView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../../api.js';
import { ErrorAlert } from '../../components/ErrorAlert';
import { SelectField } from '../../components/SelectField';

/**
 * The gateway's guardrails (docs/guardrails.md): each with its check, stages, action and what
 * it is attached to, and a dry run of one on a sample text. Guardrails are defined in the
 * config file only, so the page shows them read-only with that source.
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
        options={[
          { value: 'input', label: 'input (the request)' },
          { value: 'output', label: "output (the model's answer)" },
        ]}
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
  const list = useQuery({ queryKey: ['guardrails'], queryFn: () => adminApi.guardrails.list() });
  const guardrails = list.data?.data;
  return (
    <section aria-labelledby="guardrails-title">
      <div className="page-head">
        <h1 id="guardrails-title">Guardrails</h1>
      </div>
      <p className="muted">
        Checks the gateway runs before and after model calls and MCP tool calls. They are defined in the config file (<code>guardrails</code>); change them there and reload the
        gateway.
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
          </tr>
        </thead>
        <tbody>
          {guardrails?.length === 0 && (
            <tr>
              <td colSpan={7}>No guardrails are configured.</td>
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
              <td>{guardrail.on_error === 'closed' ? 'block (closed)' : 'let through (open)'}</td>
              <td>{attachedTo(guardrail.apply)}</td>
              <td>config file</td>
            </tr>
          ))}
        </tbody>
      </table>
      {guardrails !== undefined && guardrails.length > 0 && <DryRun guardrails={guardrails} />}
    </section>
  );
}
