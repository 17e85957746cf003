import {
  Background,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  useReactFlow,
  type Connection,
  type Edge,
  type EdgeChange,
  type Node,
  type NodeChange,
  type NodeProps,
} from '@xyflow/react';
// Imported through Vite, so it lands in the built stylesheet: the CSP allows no inline styles.
import '@xyflow/react/dist/style.css';
import { useMemo, useState, type DragEvent } from 'react';
import type { NodeTypeSchema } from '@modelgate/admin-api';
import { drawnPositions, linksOf, NEXT, type GraphJson, type GraphNodeJson, type Point } from './graph.js';

interface AgentNodeData extends Record<string, unknown> {
  label: string;
  type: string;
  handles: readonly string[];
  hasInput: boolean;
  problems: number;
  entry: boolean;
  summary: string;
}

type AgentNode = Node<AgentNodeData, 'agent'>;

/** The drag payload of a palette entry: the node type to add. */
export const PALETTE_MIME = 'application/x-modelgate-node-type';

/** The outgoing handles of a node type: next, its branch handles, or none (output). */
export function handlesOf(schema: NodeTypeSchema | undefined): readonly string[] {
  if (schema === undefined) return [NEXT];
  return schema.links.kind === 'next' ? [NEXT] : schema.links.kind === 'branches' ? schema.links.handles : [];
}

function AgentNodeView({ data, selected }: NodeProps<AgentNode>) {
  return (
    <div className={`agent-node type-${data.type}${selected ? ' selected' : ''}${data.problems > 0 ? ' has-problems' : ''}`}>
      {data.hasInput && <Handle type="target" position={Position.Top} />}
      <div className="agent-node-type">
        {data.type}
        {data.entry && <span className="entry-mark"> · entry</span>}
      </div>
      <div className="agent-node-id">{data.label}</div>
      <div className="agent-node-summary">{data.summary}</div>
      {data.problems > 0 && (
        <span className="problem-count" title={`${data.problems} problem(s)`}>
          {data.problems} problem{data.problems === 1 ? '' : 's'}
        </span>
      )}
      <div className="agent-node-handles">
        {data.handles.map((handle) => (
          <span key={handle} className="handle-slot">
            {handle !== NEXT && <span className="handle-label">{handle}</span>}
            <Handle type="source" id={handle} position={Position.Bottom} />
          </span>
        ))}
      </div>
    </div>
  );
}

const NODE_VIEWS = { agent: AgentNodeView };

/** One line on the node about what it does: its model, test, text or URL. */
function summaryOf(node: GraphNodeJson): string {
  const config = node.config ?? {};
  const text = (value: unknown) => (typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value));
  switch (node.type) {
    case 'condition':
      return config.expr !== undefined ? text(config.expr) : [config.field, config.op, config.value].map(text).filter((part) => part !== '').join(' ');
    case 'loop':
      return config.count !== undefined ? `${text(config.count)} times` : text(config.while);
    case 'http':
      return `${text(config.method ?? 'GET')} ${text(config.url)}`;
    case 'output':
      return text(config.text);
    default:
      return text(config.model);
  }
}

export interface CanvasProps {
  graph: GraphJson;
  schemas: readonly NodeTypeSchema[];
  selected: ReadonlySet<string>;
  problemsByNode: ReadonlyMap<string, number>;
  onSelect: (ids: Set<string>) => void;
  onMove: (positions: Map<string, Point>) => void;
  onConnect: (source: string, handle: string, target: string) => void;
  onDisconnect: (source: string, handle: string) => void;
  onRemove: (ids: Set<string>) => void;
  onDropType: (type: string, at: Point) => void;
}

/** The graph on a canvas (React Flow): nodes with their link handles, edges for next and each branch. */
export function Canvas(props: CanvasProps) {
  const { graph, schemas, selected, problemsByNode } = props;
  const flow = useReactFlow();
  // While a node is dragged its position lives here; the graph gets x/y once, when it is dropped.
  const [dragging, setDragging] = useState<Map<string, Point>>(new Map());
  const [selectedEdges, setSelectedEdges] = useState<Set<string>>(new Set());

  const nodes = useMemo<AgentNode[]>(() => {
    const positions = drawnPositions(graph);
    return graph.nodes.map((node) => {
      const schema = schemas.find((entry) => entry.type === node.type);
      return {
        id: node.id,
        type: 'agent',
        position: dragging.get(node.id) ?? positions.get(node.id)!,
        selected: selected.has(node.id),
        data: {
          label: node.id,
          type: node.type,
          handles: handlesOf(schema),
          hasInput: node.type !== 'input',
          problems: problemsByNode.get(node.id) ?? 0,
          entry: graph.entry === node.id,
          summary: summaryOf(node),
        },
        ariaLabel: `${node.type} node ${node.id}`,
      };
    });
  }, [graph, schemas, selected, problemsByNode, dragging]);

  const edges = useMemo<Edge[]>(
    () =>
      linksOf(graph).map((link) => ({
        id: `${link.source}:${link.handle}`,
        source: link.source,
        sourceHandle: link.handle,
        target: link.target,
        ...(link.handle !== NEXT ? { label: link.handle } : {}),
        selected: selectedEdges.has(`${link.source}:${link.handle}`),
        markerEnd: { type: MarkerType.ArrowClosed },
      })),
    [graph, selectedEdges],
  );

  const onNodesChange = (changes: NodeChange<AgentNode>[]) => {
    const moved = new Map(dragging);
    const dropped = new Map<string, Point>();
    let selection: Set<string> | null = null;
    const removed = new Set<string>();
    for (const change of changes) {
      if (change.type === 'position' && change.position !== undefined) {
        if (change.dragging === true) moved.set(change.id, change.position);
        else dropped.set(change.id, change.position);
      } else if (change.type === 'position' && change.dragging === false && moved.has(change.id)) {
        dropped.set(change.id, moved.get(change.id)!);
      } else if (change.type === 'select') {
        selection ??= new Set(selected);
        if (change.selected) selection.add(change.id);
        else selection.delete(change.id);
      } else if (change.type === 'remove') {
        removed.add(change.id);
      }
    }
    for (const id of dropped.keys()) moved.delete(id);
    if (dropped.size > 0) props.onMove(new Map([...dropped].map(([id, point]) => [id, { x: Math.round(point.x), y: Math.round(point.y) }])));
    if (moved.size > 0 || dropped.size > 0) setDragging(moved);
    if (selection !== null) props.onSelect(selection);
    if (removed.size > 0) props.onRemove(removed);
  };

  const onEdgesChange = (changes: EdgeChange[]) => {
    const next = new Set(selectedEdges);
    for (const change of changes) {
      if (change.type === 'select') {
        if (change.selected) next.add(change.id);
        else next.delete(change.id);
      } else if (change.type === 'remove') {
        const [source, handle] = change.id.split(':') as [string, string];
        props.onDisconnect(source, handle);
        next.delete(change.id);
      }
    }
    setSelectedEdges(next);
  };

  const onConnect = (connection: Connection) => {
    props.onConnect(connection.source, connection.sourceHandle ?? NEXT, connection.target);
  };

  const onDrop = (event: DragEvent) => {
    const type = event.dataTransfer.getData(PALETTE_MIME);
    if (type === '') return;
    event.preventDefault();
    props.onDropType(type, flow.screenToFlowPosition({ x: event.clientX, y: event.clientY }));
  };

  return (
    <div className="canvas" aria-label="Graph canvas" role="region">
      <ReactFlow<AgentNode>
        nodes={nodes}
        edges={edges}
        nodeTypes={NODE_VIEWS}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={onConnect}
        onDragOver={(event) => {
          event.preventDefault();
          event.dataTransfer.dropEffect = 'move';
        }}
        onDrop={onDrop}
        deleteKeyCode={['Delete', 'Backspace']}
        fitView
        fitViewOptions={{ padding: 0.2, maxZoom: 1 }}
        minZoom={0.2}
      >
        <Background />
        <Controls />
      </ReactFlow>
    </div>
  );
}
