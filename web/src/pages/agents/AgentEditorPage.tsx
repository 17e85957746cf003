import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ReactFlowProvider } from '@xyflow/react';
import { useEffect, useMemo, useRef, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router-dom';
import { adminApi, ApiError } from '../../api.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { LeaveGuard } from '../../components/LeaveGuard.js';
import { Canvas, PALETTE_MIME } from './Canvas.js';
import { ConversationsPanel } from './ConversationsPanel.js';
import { GrantsPanel } from './GrantsPanel.js';
import {
  addNode,
  autoLayout,
  connect,
  disconnect,
  drawnPositions,
  NODE_HEIGHT,
  parseGraph,
  pasteNodes,
  removeNodes,
  renameNode,
  starterGraph,
  templatePaths,
  updateNode,
  type GraphJson,
  type GraphNodeJson,
  type Point,
} from './graph.js';
import { GraphSettings } from './GraphSettings.js';
import { NodeForm } from './NodeForm.js';
import { TestPanel } from './TestPanel.js';
import { useUndoable } from './useUndoable.js';
import { VersionsPanel } from './VersionsPanel.js';

/** Validation runs on the gateway this long after the last change. */
const VALIDATE_DELAY_MS = 400;
const PASTE_OFFSET = { x: 40, y: 40 };
const TABS = [
  { id: 'node', label: 'Node' },
  { id: 'graph', label: 'Graph' },
  { id: 'test', label: 'Test' },
  { id: 'versions', label: 'Publish' },
  { id: 'conversations', label: 'Conversations' },
] as const;
type Tab = (typeof TABS)[number]['id'];

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
}

/** The errors of a load or save, as the page shows them. */
function messageOf(failure: unknown): string {
  return failure instanceof ApiError ? failure.message : failure instanceof Error ? failure.message : String(failure);
}

function exportGraph(graph: GraphJson, slug: string): void {
  const url = URL.createObjectURL(new Blob([`${JSON.stringify(graph, null, 2)}\n`], { type: 'application/json' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = `${slug}.json`;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * The agent graph editor: a palette, the canvas, and a side panel with the selected node's
 * form, the graph's settings, test runs and publishing. Every change is validated on the
 * gateway (debounced) and each problem is pinned to its node and field.
 */
export function AgentEditorPage() {
  const slug = useParams().slug!;
  /** The project a new agent is created in by its first save. */
  const project = useSearchParams()[0].get('project') ?? undefined;
  const graph = useUndoable<GraphJson>(starterGraph(slug));
  const client = useQueryClient();
  const schema = useQuery({ queryKey: ['agent-schema'], queryFn: adminApi.agents.schema, staleTime: Infinity });
  const catalog = useQuery({ queryKey: ['models'], queryFn: adminApi.models });
  const detail = useQuery({
    queryKey: ['agent', slug],
    // An agent not saved yet is null: its first save creates it.
    queryFn: () =>
      adminApi.agents.get(slug).catch((failure: unknown) => {
        if (failure instanceof ApiError && failure.code === 'agent_not_found') return null;
        throw failure;
      }),
    // The graph is edited from the draft as it is now, never from an older copy in the cache.
    refetchOnMount: 'always',
  });
  const agent = detail.data ?? null;
  const [savedText, setSavedText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selection, setSelected] = useState<Set<string>>(new Set());
  const [tab, setTab] = useState<Tab>('node');
  const [notice, setNotice] = useState<string | null>(null);
  const clipboard = useRef<GraphNodeJson[]>([]);
  const importInput = useRef<HTMLInputElement>(null);
  const { reset } = graph;

  // The graph starts as the saved draft, once per agent opened; later reads (after a save or a
  // publish) leave the graph being edited alone.
  const [openedSlug, setOpenedSlug] = useState<string | null>(null);
  const answered = detail.isFetchedAfterMount || detail.isError;
  useEffect(() => {
    if (openedSlug === slug || !answered) return;
    setOpenedSlug(slug);
    if (detail.data === null || detail.data === undefined) return;
    reset(detail.data.draft.graph as GraphJson);
    setSavedText(JSON.stringify(detail.data.draft.graph));
  }, [openedSlug, slug, answered, detail.data, reset]);
  const loading = openedSlug !== slug || schema.isPending || catalog.isPending;

  // Validate on the gateway a moment after the last change; the issues shown stay until the next answer.
  const current = graph.value;
  const [checked, setChecked] = useState<GraphJson | null>(null);
  useEffect(() => {
    const timer = setTimeout(() => setChecked(current), VALIDATE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [current]);
  const validation = useQuery({
    queryKey: ['agent-validate', checked],
    queryFn: () => adminApi.agents.validate(checked),
    enabled: checked !== null,
    staleTime: Infinity,
    placeholderData: keepPreviousData,
  });
  const issues = validation.data?.issues ?? null;

  // Undo or redo may take selected nodes away: only nodes the graph has count.
  const selected = useMemo(() => new Set(current.nodes.filter((node) => selection.has(node.id)).map((node) => node.id)), [current, selection]);
  const schemas = useMemo(() => schema.data?.node_types ?? [], [schema.data]);
  const paths = useMemo(() => templatePaths(current, schemas), [current, schemas]);
  const problemsByNode = useMemo(() => {
    const counts = new Map<string, number>();
    for (const issue of issues ?? []) if (issue.node !== null) counts.set(issue.node, (counts.get(issue.node) ?? 0) + 1);
    return counts;
  }, [issues]);
  const currentText = JSON.stringify(current);
  const unsaved = savedText !== currentText;
  // What leaving would lose: changes to the saved draft, or to the starter graph of an agent not saved yet.
  const starterText = useMemo(() => JSON.stringify(starterGraph(slug)), [slug]);
  const edited = !loading && currentText !== (savedText ?? starterText);
  const selectedNode = selected.size === 1 ? current.nodes.find((node) => selected.has(node.id)) : undefined;

  const change = graph.set;
  const select = (ids: Set<string>) => {
    setSelected(ids);
    if (ids.size === 1) setTab('node');
  };
  const place = (type: string, at?: Point) => {
    const positions = drawnPositions(current);
    const lowest = Math.max(-NODE_HEIGHT, ...[...positions.values()].map((point) => point.y));
    const added = addNode(current, type, at ?? { x: 0, y: lowest + NODE_HEIGHT + 60 });
    change(added.graph);
    select(new Set([added.id]));
  };
  const copy = () => {
    clipboard.current = current.nodes.filter((node) => selected.has(node.id)).map((node) => ({ ...node, ...drawnPositions(current).get(node.id) }));
    setNotice(`${clipboard.current.length} node(s) copied.`);
  };
  const paste = () => {
    if (clipboard.current.length === 0) return;
    const pasted = pasteNodes(current, clipboard.current, PASTE_OFFSET);
    change(pasted.graph);
    setSelected(new Set(pasted.ids));
  };
  const remove = () => {
    change(removeNodes(current, selected));
    setSelected(new Set());
  };

  // Shortcuts anywhere on the page but in a text field: undo, redo, copy, paste.
  const shortcuts = useRef<Record<string, () => void>>({});
  shortcuts.current = { z: graph.undo, Z: graph.redo, y: graph.redo, c: copy, v: paste };
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (isTyping(event.target) || !(event.ctrlKey || event.metaKey)) return;
      const action = shortcuts.current[event.shiftKey ? event.key.toUpperCase() : event.key.toLowerCase()];
      if (action === undefined) return;
      event.preventDefault();
      action();
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, []);

  // A save or a publish changes this agent's detail and its row in the agents list.
  const refreshAgent = () => Promise.all([client.invalidateQueries({ queryKey: ['agent', slug] }), client.invalidateQueries({ queryKey: ['agents'] })]);
  const save = useMutation({
    mutationFn: (saving: GraphJson) => adminApi.agents.save(slug, saving, agent === null ? project : undefined),
    onMutate: () => setError(null),
    onSuccess: async (saved, saving) => {
      await refreshAgent();
      setSavedText(JSON.stringify(saving));
      setNotice(`Saved as draft ${saved.draft_version}.`);
    },
  });
  const failure = save.error ?? validation.error ?? schema.error ?? catalog.error ?? detail.error;

  const importFile = async (file: File) => {
    try {
      change(parseGraph(await file.text()));
      setSelected(new Set());
      setNotice(`Imported ${file.name}.`);
    } catch (failure) {
      setError(`${file.name}: ${messageOf(failure)}`);
    }
  };

  if (loading) return <p className="loading" role="status">Loading…</p>;
  const graphIssues = (issues ?? []).filter((issue) => issue.node === null);
  const valid = issues !== null && issues.length === 0;

  return (
    <section className="agent-editor" aria-labelledby="editor-title">
      <LeaveGuard when={edited} description={`${slug} has changes that are not saved as a draft. Leave, and they are lost.`} />
      <div className="page-head">
        <h1 id="editor-title">
          <Link to="/agents">Agents</Link> / {slug}
        </h1>
        <div className="row-actions toolbar" role="toolbar" aria-label="Graph">
          <button type="button" className="secondary small" onClick={graph.undo} disabled={!graph.canUndo}>
            Undo
          </button>
          <button type="button" className="secondary small" onClick={graph.redo} disabled={!graph.canRedo}>
            Redo
          </button>
          <button type="button" className="secondary small" onClick={copy} disabled={selected.size === 0}>
            Copy
          </button>
          <button type="button" className="secondary small" onClick={paste}>
            Paste
          </button>
          <button type="button" className="secondary small" onClick={remove} disabled={selected.size === 0}>
            Delete
          </button>
          <button type="button" className="secondary small" onClick={() => change(autoLayout(current))}>
            Auto-layout
          </button>
          <button type="button" className="secondary small" onClick={() => importInput.current?.click()}>
            Import JSON
          </button>
          <input
            ref={importInput}
            type="file"
            accept="application/json,.json"
            hidden
            aria-label="Graph file to import"
            onChange={(event) => {
              const file = event.target.files?.[0];
              event.target.value = '';
              if (file !== undefined) void importFile(file);
            }}
          />
          <button type="button" className="secondary small" onClick={() => exportGraph(current, slug)}>
            Export JSON
          </button>
          <button type="button" onClick={() => save.mutate(current)} disabled={save.isPending || !valid || !unsaved}>
            {save.isPending ? 'Saving…' : unsaved ? 'Save draft' : 'Saved'}
          </button>
        </div>
      </div>
      <p className="status-line" role="status">
        {issues === null ? 'Checking…' : valid ? 'Valid.' : `${issues.length} problem${issues.length === 1 ? '' : 's'}.`}{' '}
        {agent === null ? 'Not saved yet.' : `Draft ${agent.latest_draft}${unsaved ? ' + unsaved changes' : ''}; ${agent.published_version === null ? 'not published' : `version ${agent.published_version} live`}.`}{' '}
        {notice}
      </p>
      <ErrorAlert message={error ?? (failure === null ? null : messageOf(failure))} />
      {/* Always drawn, at one height, so the canvas never moves when problems come and go. */}
      <section className={`problems${issues !== null && issues.length > 0 ? ' has-problems' : ''}`} aria-label="Problems">
        {issues === null || issues.length === 0 ? (
          <p className="hint">{issues === null ? 'Checking…' : 'No problems: the gateway accepts this graph.'}</p>
        ) : (
          <ul>
            {issues.map((issue, index) => (
              <li key={index}>
                {issue.node === null ? (
                  <button type="button" className="link" onClick={() => setTab('graph')}>
                    graph
                  </button>
                ) : (
                  <button type="button" className="link" onClick={() => select(new Set([issue.node!]))}>
                    {issue.node}
                  </button>
                )}{' '}
                {issue.field}: {issue.message}
              </li>
            ))}
          </ul>
        )}
      </section>
      <div className="editor-grid">
        <nav className="palette" aria-label="Node types">
          <h2>Add</h2>
          {schemas.map((entry) => (
            <button
              key={entry.type}
              type="button"
              className={`secondary small palette-item type-${entry.type}`}
              draggable
              title={entry.description}
              onDragStart={(event) => event.dataTransfer.setData(PALETTE_MIME, entry.type)}
              onClick={() => place(entry.type)}
            >
              {entry.type}
            </button>
          ))}
        </nav>
        <ReactFlowProvider>
          <Canvas
            graph={current}
            schemas={schemas}
            selected={selected}
            problemsByNode={problemsByNode}
            onSelect={select}
            onMove={(positions) => change((graphNow) => positions.size === 0 ? graphNow : { ...graphNow, nodes: graphNow.nodes.map((node) => (positions.has(node.id) ? { ...node, ...positions.get(node.id) } : node)) })}
            onConnect={(source, handle, target) => change(connect(current, source, handle, target))}
            onDisconnect={(source, handle) => change((graphNow) => disconnect(graphNow, source, handle))}
            onRemove={(ids) => {
              change((graphNow) => removeNodes(graphNow, ids));
              setSelected(new Set());
            }}
            onDropType={place}
          />
        </ReactFlowProvider>
        <aside className="side-panel" aria-label="Editor panel">
          <div role="tablist" aria-label="Panels" className="tabs">
            {TABS.map((entry) => (
              <button key={entry.id} type="button" role="tab" id={`tab-${entry.id}`} aria-selected={tab === entry.id} aria-controls={`panel-${entry.id}`} className={tab === entry.id ? 'small' : 'secondary small'} onClick={() => setTab(entry.id)}>
                {entry.label}
              </button>
            ))}
          </div>
          <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
            {tab === 'node' &&
              (selectedNode === undefined ? (
                <p className="hint">Select a node on the canvas to edit it, or add one from the palette.</p>
              ) : (
                <NodeForm
                  key={selectedNode.id}
                  node={selectedNode}
                  graph={current}
                  schema={schemas.find((entry) => entry.type === selectedNode.type)}
                  issues={(issues ?? []).filter((issue) => issue.node === selectedNode.id)}
                  paths={paths}
                  models={catalog.data?.data ?? []}
                  outputTypes={schema.data?.output_field_types ?? []}
                  onConfig={(name, value) =>
                    change(
                      (graphNow) =>
                        updateNode(graphNow, selectedNode.id, (node) => {
                          const { [name]: _old, ...rest } = node.config ?? {};
                          return { ...node, config: value === undefined ? rest : { ...node.config, [name]: value } };
                        }),
                      `${selectedNode.id}.${name}`,
                    )
                  }
                  onLink={(handle, target) => change(target === null ? disconnect(current, selectedNode.id, handle) : connect(current, selectedNode.id, handle, target))}
                  onRename={(id) => {
                    change(renameNode(current, selectedNode.id, id));
                    setSelected(new Set([id]));
                  }}
                />
              ))}
            {tab === 'graph' && <GraphSettings graph={current} issues={graphIssues} onChange={change} />}
            {tab === 'test' && <TestPanel slug={slug} projectId={agent?.project_id} draftVersion={agent?.latest_draft ?? null} unsaved={unsaved} />}
            {tab === 'conversations' && <ConversationsPanel slug={slug} projectId={agent?.project_id} />}
            {tab === 'versions' && (
              <>
                <VersionsPanel agent={agent} onChanged={refreshAgent} />
                {agent !== null && <GrantsPanel slug={agent.slug} projectId={agent.project_id} />}
              </>
            )}
          </div>
        </aside>
      </div>
    </section>
  );
}
