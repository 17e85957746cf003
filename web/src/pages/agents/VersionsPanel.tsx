import { useMutation, useQuery } from '@tanstack/react-query';
import { diffLines } from 'diff';
import { useEffect, useMemo, useState } from 'react';
import type { AgentDetailView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../../api.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { formatTime } from '../../format.js';

/** How to call the published agent: curl, and the official openai SDKs' generic POST. */
export function runSnippets(slug: string, origin: string): { label: string; code: string }[] {
  const url = `${origin}/v1/agents/${slug}/runs`;
  return [
    {
      label: 'curl',
      code: `curl -s ${url} \\\n  -H "Authorization: Bearer $MODELGATE_API_KEY" -H 'content-type: application/json' \\\n  -d '{"input": "Hello"}'`,
    },
    {
      label: 'JavaScript (openai SDK)',
      code: `import OpenAI from 'openai';\n\nconst client = new OpenAI({ baseURL: '${origin}/v1', apiKey: process.env.MODELGATE_API_KEY });\nconst run = await client.post('/agents/${slug}/runs', { body: { input: 'Hello' } });\n// next turn: { input: '…', conversation_id: run.conversation_id }\nconsole.log(run.output.text);`,
    },
    {
      label: 'Python (openai SDK)',
      code: `import os\nfrom openai import OpenAI\n\nclient = OpenAI(base_url="${origin}/v1", api_key=os.environ["MODELGATE_API_KEY"])\nrun = client.post("/agents/${slug}/runs", body={"input": "Hello"}, cast_to=object)\nprint(run["output"]["text"])`,
    },
  ];
}

/** A saved draft never changes: read once. */
function draftQuery(slug: string, version: number) {
  return { queryKey: ['agent', slug, 'drafts', version], queryFn: () => adminApi.agents.draft(slug, version), staleTime: Infinity };
}

function DraftDiff({ slug, latest }: { slug: string; latest: number }) {
  const [from, setFrom] = useState(Math.max(1, latest - 1));
  const [to, setTo] = useState(latest);
  useEffect(() => {
    setTo(latest);
    setFrom(Math.max(1, latest - 1));
  }, [latest]);
  const fromDraft = useQuery(draftQuery(slug, from));
  const toDraft = useQuery(draftQuery(slug, to));
  const parts = useMemo(
    () => (fromDraft.data === undefined || toDraft.data === undefined ? null : diffLines(JSON.stringify(fromDraft.data.graph, null, 2), JSON.stringify(toDraft.data.graph, null, 2))),
    [fromDraft.data, toDraft.data],
  );
  const failure = fromDraft.error ?? toDraft.error;
  const error = failure === null ? null : failure.message;
  const numbers = Array.from({ length: latest }, (_, index) => index + 1);
  const picker = (id: string, label: string, value: number, set: (value: number) => void) => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => set(Number(event.target.value))}>
        {numbers.map((number) => (
          <option key={number} value={number}>
            draft {number}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <section aria-labelledby="diff-title">
      <h3 id="diff-title">Drafts</h3>
      <div className="filters">
        {picker('diff-from', 'Compare', from, setFrom)}
        {picker('diff-to', 'with', to, setTo)}
      </div>
      <ErrorAlert message={error} />
      {parts !== null && (
        <pre className="diff" aria-label={`Changes from draft ${from} to draft ${to}`}>
          {parts.every((part) => !part.added && !part.removed) && <span className="muted">No changes.{'\n'}</span>}
          {parts.map((part, index) =>
            part.added ? (
              <ins key={index}>{part.value}</ins>
            ) : part.removed ? (
              <del key={index}>{part.value}</del>
            ) : (
              <span key={index} className="muted">
                {part.value.split('\n').length > 7 ? `${part.value.split('\n').slice(0, 3).join('\n')}\n  …\n${part.value.split('\n').slice(-4).join('\n')}` : part.value}
              </span>
            ),
          )}
        </pre>
      )}
    </section>
  );
}

/**
 * Publishing and its history: publish the saved draft as the next version, roll back in one
 * click (republishes an earlier version's draft as a new version), the snippets to call it,
 * and the diff between any two drafts.
 */
export function VersionsPanel({ agent, onChanged }: { agent: AgentDetailView | null; onChanged: () => Promise<unknown> }) {
  const publish = useMutation({ mutationFn: ({ slug, draftVersion }: { slug: string; draftVersion: number }) => adminApi.agents.publish(slug, draftVersion), onSuccess: onChanged });
  if (agent === null) return <p className="hint">Save the graph to start its history.</p>;
  const busy = publish.isPending;
  const error = publish.error === null ? null : publish.error instanceof ApiError ? publish.error.message : String(publish.error);

  const live = agent.versions.find((version) => version.version === agent.published_version);
  return (
    <section aria-labelledby="versions-title" className="versions-panel">
      <h2 id="versions-title">Publish</h2>
      <p>
        {live === undefined ? 'Not published yet.' : `Live: version ${live.version} (draft ${live.draft_version}).`} The newest draft is {agent.latest_draft}.
      </p>
      <button type="button" disabled={busy || live?.draft_version === agent.latest_draft} onClick={() => publish.mutate({ slug: agent.slug, draftVersion: agent.latest_draft })}>
        Publish draft {agent.latest_draft}
      </button>
      <ErrorAlert message={error} />
      {live !== undefined && (
        <>
          <h3>Call it</h3>
          {runSnippets(agent.slug, window.location.origin).map((snippet) => (
            <figure key={snippet.label} className="snippet">
              <figcaption>{snippet.label}</figcaption>
              <pre>{snippet.code}</pre>
            </figure>
          ))}
        </>
      )}
      <h3>Versions</h3>
      <ol className="version-list" reversed>
        {[...agent.versions].reverse().map((version) => (
          <li key={version.version}>
            version {version.version} · draft {version.draft_version} · {formatTime(version.published_at)}
            {version.version === agent.published_version ? (
              <span className="badge active">live</span>
            ) : (
              <button type="button" className="secondary small" disabled={busy} onClick={() => publish.mutate({ slug: agent.slug, draftVersion: version.draft_version })}>
                Roll back to version {version.version}
              </button>
            )}
          </li>
        ))}
      </ol>
      {agent.latest_draft > 1 && <DraftDiff slug={agent.slug} latest={agent.latest_draft} />}
    </section>
  );
}
