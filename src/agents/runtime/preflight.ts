import type { Catalog } from '../../catalog/index.js';
import { GatewayError } from '../../errors/index.js';
import type { CompiledGraph, GraphNode } from '../graph/types.js';

function targets(node: GraphNode): string[] {
  if (node.type === 'condition' || node.type === 'loop') return Object.values(node.branches);
  return node.type === 'output' ? [] : [node.next];
}

/**
 * Refuses a turn with images before anything runs (docs/agents.md) when an llm node that would
 * receive them uses a model without `image` input. A node receives the turn's media unless it
 * has its own `user` prompt with includeInputMedia false.
 */
export function assertTurnImagesAccepted(graph: CompiledGraph, catalog: Pick<Catalog, 'resolve'>): void {
  const seen = new Set<string>([graph.entry]);
  const queue = [graph.entry];
  while (queue.length > 0) {
    const node = graph.nodes.get(queue.pop()!);
    if (node === undefined) continue;
    if (node.type === 'llm' && (node.user === null || node.includeInputMedia)) {
      const model = catalog.resolve(node.model, { mode: 'chat' });
      if (!model.model.entry.input_modalities.includes('image')) {
        throw new GatewayError(
          'unsupported_input_modality',
          `This agent cannot take images: its step "${node.id}" uses the model "${node.model}", which accepts only ${model.model.entry.input_modalities.join(', ')}. Send text only.`,
          { param: 'input' },
        );
      }
    }
    for (const target of targets(node)) {
      if (!seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
}
