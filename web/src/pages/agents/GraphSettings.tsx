import type { GraphIssue } from '@modelgate/admin-api';
import type { GraphJson } from './graph.js';

/** A variable's value as typed: JSON when it parses (3, true, ["a"]), otherwise the text itself. */
function readValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function showValue(value: unknown): string {
  return typeof value === 'string' && JSON.stringify(readValue(value)) !== JSON.stringify(value) ? value : JSON.stringify(value);
}

/** The graph's own fields: name, entry and variables (`{{vars.<name>}}`), and its graph-level problems. */
export function GraphSettings({ graph, issues, onChange }: { graph: GraphJson; issues: readonly GraphIssue[]; onChange: (graph: GraphJson, key: string) => void }) {
  const variables = Object.entries(graph.variables ?? {});
  const setVariables = (entries: [string, unknown][]) => {
    const { variables: _old, ...rest } = graph;
    onChange(entries.length === 0 ? (rest as GraphJson) : { ...graph, variables: Object.fromEntries(entries) }, 'variables');
  };
  return (
    <section aria-labelledby="graph-settings-title" className="graph-settings">
      <h2 id="graph-settings-title">Graph</h2>
      <div className="field">
        <label htmlFor="graph-name">Name</label>
        <input id="graph-name" value={graph.name} onChange={(event) => onChange({ ...graph, name: event.target.value }, 'name')} />
      </div>
      <div className="field">
        <label htmlFor="graph-entry">Entry node</label>
        <select id="graph-entry" value={graph.entry} onChange={(event) => onChange({ ...graph, entry: event.target.value }, 'entry')}>
          {!graph.nodes.some((node) => node.id === graph.entry) && <option value={graph.entry}>{graph.entry || 'none'}</option>}
          {graph.nodes.map((node) => (
            <option key={node.id} value={node.id}>
              {node.id} ({node.type})
            </option>
          ))}
        </select>
      </div>
      <fieldset>
        <legend>Variables</legend>
        {variables.map(([name, value], index) => (
          <div className="output-row" key={index}>
            <input
              aria-label={`Variable ${index + 1} name`}
              value={name}
              onChange={(event) => setVariables(variables.map((entry, at) => (at === index ? [event.target.value, entry[1]] : entry)))}
            />
            <input
              aria-label={`Variable ${index + 1} value`}
              value={showValue(value)}
              onChange={(event) => setVariables(variables.map((entry, at) => (at === index ? [entry[0], readValue(event.target.value)] : entry)))}
            />
            <button type="button" className="secondary small" aria-label={`Remove variable ${name}`} onClick={() => setVariables(variables.filter((_, at) => at !== index))}>
              ×
            </button>
          </div>
        ))}
        <button type="button" className="secondary small" onClick={() => setVariables([...variables, [`var_${variables.length + 1}`, '']])}>
          Add variable
        </button>
      </fieldset>
      {issues.length > 0 && (
        <ul className="field-problems" role="alert">
          {issues.map((issue) => (
            <li key={`${issue.field}:${issue.message}`}>
              {issue.field}: {issue.message}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
