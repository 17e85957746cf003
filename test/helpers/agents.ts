import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog, type CatalogData } from '../../src/catalog/index.js';
import { loadConfig, type GatewayConfig } from '../../src/config/index.js';
import { HostAllowlist } from '../../src/agents/http/allowlist.js';
import type { GraphEnvironment } from '../../src/agents/graph/validate.js';

const PRICED = { cached_input_per_million: null, cache_write_per_million: null, cache_write_1h_per_million: null, image_per_unit: null, audio_per_minute: null, tiers: [], status: 'documented' as const, note: null };

/** A small catalog for agent unit tests: an image-capable chat model, a text-only one and an image model. */
export const AGENT_TEST_CATALOG: CatalogData = {
  models: [
    {
      id: 'vision-chat', provider: 'scripted', ownedBy: 'scripted', mode: 'chat', description: 'chat with image input',
      intelligence: 'High', speed: 'Fast', inputModalities: ['text', 'image'], outputModalities: ['text'],
      contextWindow: 128000, maxOutputTokens: 4096, tools: true,
      pricing: { ...PRICED, input_per_million: 1, output_per_million: 2 },
    },
    {
      id: 'text-chat', provider: 'scripted', ownedBy: 'scripted', mode: 'chat', description: 'text-only chat',
      intelligence: 'Average', speed: 'Fast', inputModalities: ['text'], outputModalities: ['text'],
      contextWindow: 32000, maxOutputTokens: 4096, tools: false, pricing: null,
    },
    {
      id: 'image-gen', provider: 'scripted', ownedBy: 'scripted', mode: 'image_generation', description: 'images',
      intelligence: 'Image', speed: 'Medium', inputModalities: ['text'], outputModalities: ['image'],
      contextWindow: null, maxOutputTokens: null, tools: false,
      pricing: { ...PRICED, input_per_million: null, output_per_million: null, image_per_unit: 0.04 },
    },
  ],
  legacyAliases: {},
  serviceAliases: {},
  defaultChatModel: 'vision-chat',
  safePrefixes: [],
};

export function agentTestConfig(env: Record<string, string> = {}): GatewayConfig {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-agents-'));
  return loadConfig({ env: { MODELGATE_DATA_DIR: join(dir, 'data'), ...env }, cwd: dir });
}

export function agentTestCatalog(config: GatewayConfig = agentTestConfig()): Catalog {
  return new Catalog(AGENT_TEST_CATALOG, config, ['scripted']);
}

export function graphEnvironment(options: { allowlist?: string[]; maxLoopIterations?: number } = {}): GraphEnvironment {
  return {
    catalog: agentTestCatalog(),
    httpAllowlist: new HostAllowlist(options.allowlist ?? []),
    maxLoopIterations: options.maxLoopIterations ?? 50,
    maxValueBytes: 1024 * 1024,
  };
}

/** input → llm → output: the smallest useful graph; `model` is the llm node's. */
export function simpleGraph(overrides: Record<string, unknown> = {}, model = 'vision-chat'): Record<string, unknown> {
  return {
    version: 1,
    name: 'simple',
    entry: 'input',
    nodes: [
      { id: 'input', type: 'input', next: 'answer' },
      { id: 'answer', type: 'llm', config: { model, system: 'Be brief.' }, next: 'out' },
      { id: 'out', type: 'output', config: { text: '{{answer.content}}' } },
    ],
    ...overrides,
  };
}

/** input → an image node of `model` → output: a graph whose runs make one image. */
export function painterGraph(model: string) {
  return {
    version: 1,
    name: 'Painter',
    entry: 'input',
    nodes: [
      { id: 'input', type: 'input', next: 'paint' },
      { id: 'paint', type: 'image', config: { model, prompt: 'A drawing of {{input}}' }, next: 'out' },
      { id: 'out', type: 'output', config: { text: 'Here it is.' } },
    ],
  };
}

/** The painter graph on the OpenAI fake's gpt-image-1. */
export const PAINTER_GRAPH = painterGraph('gpt-image-1');
