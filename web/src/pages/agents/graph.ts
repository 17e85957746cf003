import dagre from '@dagrejs/dagre';
import type { NodeTypeSchema } from '@modelgate/admin-api';

/**
 * The agent graph as authored JSON (docs/agents.md, graph version 1). The editor changes this
 * object and nothing else: fields it does not know are kept, so a file made with the CLI
 * opens and exports unchanged. Every function here returns a new graph.
 */

export interface GraphNodeJson {
  id: string;
  type: string;
  config?: Record<string, unknown>;
  next?: string;
  branches?: Record<string, string>;
  x?: number;
  y?: number;
  [field: string]: unknown;
}

export interface GraphJson {
  version: number;
  name: string;
  entry: string;
  variables?: Record<string, unknown>;
  nodes: GraphNodeJson[];
  [field: string]: unknown;
}

export interface Point {
  x: number;
  y: number;
}

/** The link handle a next edge leaves from. */
export const NEXT = 'next';

export const NODE_WIDTH = 190;
export const NODE_HEIGHT = 64;

export function starterGraph(name: string): GraphJson {
  return {
    version: 1,
    name,
    entry: 'input',
    nodes: [
      { id: 'input', type: 'input', next: 'out', x: 0, y: 0 },
      { id: 'out', type: 'output', config: { text: '{{input}}' }, x: 0, y: 140 },
    ],
  };
}

/** Reads graph JSON someone imports: it must at least be an object with a list of nodes. */
export function parseGraph(text: string): GraphJson {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Array.isArray((value as GraphJson).nodes)) {
    throw new Error('This is not an agent graph: expected a JSON object with a "nodes" list.');
  }
  for (const node of (value as GraphJson).nodes) {
    if (typeof node !== 'object' || node === null || typeof node.id !== 'string' || typeof node.type !== 'string') {
      throw new Error('Every node needs a string "id" and "type".');
    }
  }
  return value as GraphJson;
}

function withNodes(graph: GraphJson, nodes: GraphNodeJson[]): GraphJson {
  return { ...graph, nodes };
}

export function updateNode(graph: GraphJson, id: string, change: (node: GraphNodeJson) => GraphNodeJson): GraphJson {
  return withNodes(graph, graph.nodes.map((node) => (node.id === id ? change(node) : node)));
}

/** An id not yet used: `llm`, then `llm_2`, `llm_3`… */
export function freeId(graph: GraphJson, base: string, taken: ReadonlySet<string> = new Set()): string {
  const used = new Set([...graph.nodes.map((node) => node.id), ...taken, 'vars']);
  if (!used.has(base)) return base;
  for (let number = 2; ; number += 1) if (!used.has(`${base}_${number}`)) return `${base}_${number}`;
}

export function addNode(graph: GraphJson, type: string, at: Point): { graph: GraphJson; id: string } {
  const id = freeId(graph, type);
  const node: GraphNodeJson = { id, type, ...(type === 'input' ? {} : { config: {} }), x: Math.round(at.x), y: Math.round(at.y) };
  const next = withNodes(graph, [...graph.nodes, node]);
  return { graph: graph.nodes.length === 0 || graph.entry === '' ? { ...next, entry: id } : next, id };
}

/** Links `source`'s handle (next, or a branch) to `target`, replacing what it linked to. */
export function connect(graph: GraphJson, source: string, handle: string, target: string): GraphJson {
  return updateNode(graph, source, (node) => (handle === NEXT ? { ...node, next: target } : { ...node, branches: { ...node.branches, [handle]: target } }));
}

export function disconnect(graph: GraphJson, source: string, handle: string): GraphJson {
  return updateNode(graph, source, (node) => {
    if (handle === NEXT) {
      const { next: _dropped, ...rest } = node;
      return rest;
    }
    const { [handle]: _dropped, ...branches } = node.branches ?? {};
    const { branches: _old, ...rest } = node;
    return Object.keys(branches).length > 0 ? { ...rest, branches } : rest;
  });
}

/** Removes nodes and every link to them; the entry moves to the first node left when it was removed. */
export function removeNodes(graph: GraphJson, ids: ReadonlySet<string>): GraphJson {
  let next = withNodes(graph, graph.nodes.filter((node) => !ids.has(node.id)));
  for (const node of next.nodes) {
    if (node.next !== undefined && ids.has(node.next)) next = disconnect(next, node.id, NEXT);
    for (const [handle, target] of Object.entries(node.branches ?? {})) if (ids.has(target)) next = disconnect(next, node.id, handle);
  }
  return ids.has(graph.entry) ? { ...next, entry: next.nodes[0]?.id ?? '' } : next;
}

/**
 * Adds copies of `nodes` under fresh ids, moved by `offset`; links among the copies follow
 * them, links to nodes outside the copy are kept when those nodes exist.
 */
export function pasteNodes(graph: GraphJson, nodes: readonly GraphNodeJson[], offset: Point): { graph: GraphJson; ids: string[] } {
  const renamed = new Map<string, string>();
  for (const node of nodes) renamed.set(node.id, freeId(graph, node.id, new Set(renamed.values())));
  const existing = new Set(graph.nodes.map((node) => node.id));
  const target = (id: string | undefined) => (id === undefined ? undefined : (renamed.get(id) ?? (existing.has(id) ? id : undefined)));
  const copies = nodes.map((node) => {
    const { next, branches, ...rest } = structuredClone(node);
    const copy: GraphNodeJson = { ...rest, id: renamed.get(node.id)!, x: (node.x ?? 0) + offset.x, y: (node.y ?? 0) + offset.y };
    const nextTarget = target(next);
    if (nextTarget !== undefined) copy.next = nextTarget;
    const links = Object.entries(branches ?? {}).flatMap(([handle, id]) => {
      const mapped = target(id);
      return mapped === undefined ? [] : [[handle, mapped] as const];
    });
    if (links.length > 0) copy.branches = Object.fromEntries(links);
    return copy;
  });
  return { graph: withNodes(graph, [...graph.nodes, ...copies]), ids: copies.map((copy) => copy.id) };
}

/** Every link of the graph: which node, which handle, to which node. */
export function linksOf(graph: GraphJson): { source: string; handle: string; target: string }[] {
  return graph.nodes.flatMap((node) => [
    ...(typeof node.next === 'string' ? [{ source: node.id, handle: NEXT, target: node.next }] : []),
    ...Object.entries(node.branches ?? {}).map(([handle, target]) => ({ source: node.id, handle, target })),
  ]);
}

/** Top-to-bottom positions for every node (dagre), as a map; the graph itself is not changed. */
export function layoutPositions(graph: GraphJson): Map<string, Point> {
  const layout = new dagre.graphlib.Graph();
  layout.setGraph({ rankdir: 'TB', nodesep: 40, ranksep: 70 });
  layout.setDefaultEdgeLabel(() => ({}));
  // Nodes and edges in the order a run meets them (next, then branches as written).
  const ids = new Set(graph.nodes.map((node) => node.id));
  const links = linksOf(graph).filter((link) => ids.has(link.target));
  const order: string[] = ids.has(graph.entry) ? [graph.entry] : [];
  for (let index = 0; index < order.length; index += 1) {
    for (const link of links) if (link.source === order[index] && !order.includes(link.target)) order.push(link.target);
  }
  for (const node of graph.nodes) if (!order.includes(node.id)) order.push(node.id);
  for (const id of order) layout.setNode(id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const id of order) for (const link of links) if (link.source === id) layout.setEdge(link.source, link.target);
  dagre.layout(layout);
  const positions = new Map(graph.nodes.map((node) => {
    const placed = layout.node(node.id);
    return [node.id, { x: Math.round(placed.x - NODE_WIDTH / 2), y: Math.round(placed.y - NODE_HEIGHT / 2) }];
  }));
  // Dagre knows nodes, not handles: put two branch targets side by side in their handles' order.
  for (const node of graph.nodes) {
    const [left, right] = Object.values(node.branches ?? {}).map((id) => positions.get(id));
    if (left !== undefined && right !== undefined && left !== right && left.y === right.y && left.x > right.x) [left.x, right.x] = [right.x, left.x];
  }
  return positions;
}

/** Auto-layout: writes the laid-out positions into the graph's x and y. */
export function autoLayout(graph: GraphJson): GraphJson {
  const positions = layoutPositions(graph);
  return withNodes(graph, graph.nodes.map((node) => ({ ...node, ...positions.get(node.id)! })));
}

/**
 * Where each node is drawn: its own x/y, or (for a graph written without positions) where
 * auto-layout would put it. Positions are written into the graph only when a node is moved.
 */
export function drawnPositions(graph: GraphJson): Map<string, Point> {
  const missing = graph.nodes.some((node) => typeof node.x !== 'number' || typeof node.y !== 'number');
  const auto = missing ? layoutPositions(graph) : new Map<string, Point>();
  return new Map(graph.nodes.map((node) => [node.id, typeof node.x === 'number' && typeof node.y === 'number' ? { x: node.x, y: node.y } : auto.get(node.id)!]));
}

/** The paths templates may read in this graph (docs/agents.md, Templates and expressions). */
export function templatePaths(graph: GraphJson, schemas: readonly NodeTypeSchema[]): string[] {
  const paths = ['input'];
  for (const node of graph.nodes) {
    const schema = schemas.find((entry) => entry.type === node.type);
    for (const field of schema?.exposes ?? []) {
      if (field !== 'json') paths.push(`${node.id}.${field}`);
      else if (node.type === 'llm') {
        const outputs = Array.isArray(node.config?.outputs) ? (node.config.outputs as { name?: unknown }[]) : [];
        for (const output of outputs) if (typeof output.name === 'string' && output.name !== '') paths.push(`${node.id}.json.${output.name}`);
      } else paths.push(`${node.id}.json`);
    }
  }
  for (const name of Object.keys(graph.variables ?? {})) paths.push(`vars.${name}`);
  for (const node of graph.nodes) if (node.type === 'loop' && typeof node.config?.var === 'string') paths.push(`vars.${node.config.var}`);
  return paths;
}

/** Gives a node a new id; links and the entry follow it (templates that name it are the author's to change). */
export function renameNode(graph: GraphJson, from: string, to: string): GraphJson {
  const follow = (id: string) => (id === from ? to : id);
  return {
    ...graph,
    entry: follow(graph.entry),
    nodes: graph.nodes.map((node) => {
      const renamed: GraphNodeJson = { ...node, id: follow(node.id) };
      if (typeof node.next === 'string') renamed.next = follow(node.next);
      if (node.branches !== undefined) renamed.branches = Object.fromEntries(Object.entries(node.branches).map(([handle, target]) => [handle, follow(target)]));
      return renamed;
    }),
  };
}
