import { isPlainObject } from '../values.js';
import type { Checker } from './checker.js';
import type { NodeType } from './types.js';

interface RawNode {
  id: string;
  type: NodeType;
  raw: Record<string, unknown>;
}

function targetsOf(node: RawNode, ids: ReadonlyMap<string, NodeType>): string[] {
  const targets: unknown[] = [node.raw.next, ...(isPlainObject(node.raw.branches) ? Object.values(node.raw.branches) : [])];
  return targets.filter((target): target is string => typeof target === 'string' && ids.has(target));
}

/**
 * Whole-graph rules: an output node is reachable from the entry, and every cycle passes
 * through a loop node (the only place a run may go back, under a hard iteration cap).
 */
export function checkStructure(checker: Checker, entry: string, nodes: readonly RawNode[], types: ReadonlyMap<string, NodeType>): void {
  const edges = new Map(nodes.map((node) => [node.id, targetsOf(node, types)]));

  const reached = new Set<string>([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    for (const target of edges.get(queue.pop()!) ?? []) {
      if (!reached.has(target)) {
        reached.add(target);
        queue.push(target);
      }
    }
  }
  if (![...reached].some((id) => types.get(id) === 'output')) {
    checker.issue(null, 'nodes', `no output node can be reached from the entry "${entry}"; add an output node and link to it`);
  }

  // Depth-first search over the graph without the edges leaving loop nodes: any cycle left is a back-edge outside a loop.
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const reported = new Set<string>();
  const visit = (id: string): void => {
    state.set(id, 'open');
    stack.push(id);
    const targets = types.get(id) === 'loop' ? [] : (edges.get(id) ?? []);
    for (const target of targets) {
      if (state.get(target) === 'open') {
        const cycle = stack.slice(stack.indexOf(target));
        const key = [...cycle].sort().join(',');
        if (!reported.has(key)) {
          reported.add(key);
          checker.issue(id, target === id ? 'next' : 'next/branches', `goes back to "${target}" (cycle ${[...cycle, target].join(' → ')}); a graph may only repeat through a loop node`);
        }
      } else if (state.get(target) === undefined) {
        visit(target);
      }
    }
    stack.pop();
    state.set(id, 'done');
  };
  for (const node of nodes) if (state.get(node.id) === undefined) visit(node.id);
}
