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

function doneTargetOf(node: RawNode, ids: ReadonlyMap<string, NodeType>): string[] {
  const done = isPlainObject(node.raw.branches) ? node.raw.branches.done : undefined;
  return typeof done === 'string' && ids.has(done) ? [done] : [];
}

/**
 * Whole-graph rules: an output node and every other node are reachable from the entry, and every cycle goes through
 * a loop node's continue branch (the only place a run may go back, under a hard iteration cap).
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
  // A node nothing leads to never runs: most often one placed on the canvas and not linked yet.
  for (const node of nodes) {
    if (!reached.has(node.id)) checker.issue(node.id, 'id', `no path from the entry "${entry}" leads to this node, so it never runs; link to it (next or a branch) or remove it`);
  }

  // Depth-first search over the graph without the continue edges of loop nodes: any cycle left
  // is a back-edge outside a loop's body. A path from a loop's done branch back to the loop is
  // one too: the loop's count restarts after done, so nothing would ever bound it.
  const forward = new Map(nodes.map((node) => [node.id, node.type === 'loop' ? doneTargetOf(node, types) : (edges.get(node.id) ?? [])]));
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const reported = new Set<string>();
  const visit = (id: string): void => {
    state.set(id, 'open');
    stack.push(id);
    for (const target of forward.get(id) ?? []) {
      if (state.get(target) === 'open') {
        const cycle = stack.slice(stack.indexOf(target));
        const key = [...cycle].sort().join(',');
        if (!reported.has(key)) {
          reported.add(key);
          const path = [...cycle, target].join(' → ');
          const loop = cycle.find((node) => types.get(node) === 'loop');
          checker.issue(
            id,
            target === id ? 'next' : 'next/branches',
            loop === undefined
              ? `goes back to "${target}" (cycle ${path}); a graph may only repeat through a loop node`
              : `goes back to "${target}" (cycle ${path}) after the done branch of loop "${loop}"; only a loop's continue branch may lead back to it (its count restarts after done, so this would never end)`,
          );
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
