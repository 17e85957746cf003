import { addUsages, type Capability, type CheckedCall, type ProviderCall } from '../../calls/index.js';
import { GatewayError, withArticle } from '../../errors/index.js';
import { estimateImages, estimateTokens, type UsageEstimate } from '../../limits/index.js';
import { runChatToolLoop, splitQualifiedName, ToolLoopError } from '../../mcp/index.js';
import type { JsonObject, TokenUsage } from '../../model-api/index.js';
import type { ImageNode, LlmNode, OutputField } from '../graph/types.js';
import { renderTemplate, type Template } from '../templates/template.js';
import { emptyObject, isPlainObject, parseSafeJson, type SafeObject } from '../values.js';
import type { RunBudget } from './budget.js';
import { historyMessages, turnImageParts, userMessage, type ModelAbilities } from './messages.js';
import type { RunScope } from './scope.js';
import type { GeneratedImage, HistoryMessage, NodeUsage, RuntimeDependencies, Turn } from './types.js';

export interface ModelNodeContext {
  dependencies: RuntimeDependencies;
  budget: RunBudget;
  scope: RunScope;
  turn: Turn;
  history: readonly HistoryMessage[];
  /** Called with each model call's usage and cost, also when a later step fails. */
  recordUsage(usage: NodeUsage): void;
}

/** A template rendered within the run's value budget (a larger one stops the run with the budget error). */
function rendered(context: ModelNodeContext, template: Template): string {
  return renderTemplate(template, context.scope, { maxBytes: context.budget.limits.maxValueBytes });
}

/** A provider's failure, or the run's own deadline showing up as one. */
function callFailure(context: ModelNodeContext, error: unknown): unknown {
  return context.budget.timedOut ? context.budget.timeoutError() : error;
}

/**
 * One model call of the run, within the run's call budget and the caller's key caps, through
 * the model-call path: the call was checked (model, input policy) before this; its estimate is
 * reserved (a 429 when nothing is left of a cap), the provider is called, and the reservation
 * is settled with what the call used, as for a chat request.
 */
async function meteredCall<C extends Capability, T>(
  context: ModelNodeContext,
  node: { id: string; type: NodeUsage['type'] },
  call: CheckedCall<C>,
  estimate: UsageEstimate,
  providerCall: ProviderCall<C, T>,
  imagesOf: (result: T) => number | null,
): Promise<T> {
  const { dependencies, budget } = context;
  budget.modelCallStarted();
  const record = (usage: Omit<NodeUsage, 'node' | 'type' | 'model'>) => context.recordUsage({ node: node.id, type: node.type, model: call.target.resolved.id, ...usage });
  try {
    const metered = await dependencies.call.metered(dependencies.principal, call, estimate, providerCall, budget.signal);
    record({ usage: metered.usage, images: imagesOf(metered.result), costMicroUsd: metered.costMicroUsd });
    return metered.result;
  } catch (error) {
    throw callFailure(context, error);
  }
}

/** Bytes of a request's text, for its token estimate (images are priced per image, not per base64 byte). */
function promptTextBytes(messages: readonly JsonObject[]): number {
  let bytes = 0;
  for (const { content } of messages) {
    if (typeof content === 'string') bytes += Buffer.byteLength(content);
    else if (Array.isArray(content)) for (const part of content) if (isPlainObject(part) && typeof part.text === 'string') bytes += Buffer.byteLength(part.text);
  }
  return bytes;
}

function completionText(completion: JsonObject): string {
  const choices = completion.choices;
  const message = Array.isArray(choices) && isPlainObject(choices[0]) ? choices[0].message : undefined;
  const content = isPlainObject(message) ? message.content : undefined;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part: unknown) => (isPlainObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
  }
  return '';
}

/** The JSON schema asked of the provider for structured outputs. */
function outputSchema(fields: readonly OutputField[]): JsonObject {
  const properties: JsonObject = {};
  for (const field of fields) properties[field.name] = { type: field.type, ...(field.description !== null ? { description: field.description } : {}) };
  return { type: 'object', properties, required: fields.map((field) => field.name), additionalProperties: false };
}

/** Reads structured output strictly: the declared fields, of the declared types, into a null-prototype object. */
function structuredOutput(node: LlmNode, text: string): SafeObject {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i.exec(text);
  let parsed: unknown;
  try {
    parsed = parseSafeJson(fenced?.[1] ?? text);
  } catch {
    parsed = undefined;
  }
  const unreadable = (why: string) =>
    new GatewayError('provider_error', `The model of the agent's node "${node.id}" did not return the structured output the agent asked for (${why}).`, {
      logDetail: { node: node.id, reason: why },
    });
  if (!isPlainObject(parsed)) throw unreadable('not a JSON object');
  const json = emptyObject();
  for (const field of node.outputs) {
    const value = (parsed as SafeObject)[field.name];
    const fits =
      field.type === 'string' ? typeof value === 'string'
      : field.type === 'boolean' ? typeof value === 'boolean'
      : field.type === 'integer' ? Number.isInteger(value)
      : typeof value === 'number';
    if (!fits || value === undefined) throw unreadable(`field ${field.name} is not ${withArticle(field.type)}`);
    json[field.name] = value;
  }
  return json;
}

/** What a node's chat model (and its provider) can be given, read from its checked call. */
function abilitiesOf(call: CheckedCall<'chat'>): ModelAbilities {
  return { acceptsImages: call.target.resolved.model.entry.input_modalities.includes('image'), acceptsImageUrls: call.target.provider.acceptsRemoteImageUrls };
}

/** An llm node's answer, and the prompt it sent (system and user text) for authoring traces. */
export interface LlmNodeResult {
  content: string;
  json?: SafeObject;
  prompt: SafeObject;
}

export async function runLlmNode(node: LlmNode, context: ModelNodeContext): Promise<LlmNodeResult> {
  const { dependencies, budget, turn } = context;
  // The agent's author chose the model: the caller's allowedModels do not apply (docs/agents.md).
  const checked = dependencies.call.subcall({ mode: 'chat', model: node.model, capability: 'chat', param: 'config.model', purpose: `node:${node.id}` });
  const abilities = abilitiesOf(checked);
  const messages: JsonObject[] = [];
  const system = node.system === null ? null : rendered(context, node.system);
  if (system !== null) messages.push({ role: 'system', content: system });
  if (node.includeHistory) messages.push(...(await historyMessages(context.history, abilities, dependencies.media)));
  const text = node.user === null ? turn.text : rendered(context, node.user);
  const withMedia = node.user === null || node.includeInputMedia;
  messages.push(userMessage(text, withMedia ? turnImageParts(turn.images, abilities) : []));
  const call = checked.withMessages(messages);

  const body: JsonObject = { messages };
  if (node.temperature !== null) body.temperature = node.temperature;
  if (node.maxTokens !== null) body.max_tokens = node.maxTokens;
  if (node.outputs.length > 0) {
    body.response_format = { type: 'json_schema', json_schema: { name: `${node.id}_outputs`, strict: true, schema: outputSchema(node.outputs) } };
  }
  const result =
    node.tools.length > 0
      ? await toolLoopCall(node, context, call, body)
      : await meteredCall(
          context,
          { id: node.id, type: 'llm' },
          call,
          estimateTokens(call.pricing, promptTextBytes(messages), node.maxTokens),
          (chat, attempt) => chat.complete({ ...attempt, body, signal: budget.signal, requestId: dependencies.requestId }),
          () => null,
        );
  const content = completionText(result.completion);
  budget.checkValue(node.id, content);
  const prompt = Object.assign(emptyObject(), { system, user: text });
  return node.outputs.length > 0 ? { content, json: structuredOutput(node, content), prompt } : { content, prompt };
}

/** Model calls an llm node's tool loop makes at most (each counts against the run's model calls too). */
const MAX_TOOL_ROUNDS = 10;

/**
 * An llm node with gateway MCP tools: the tool loop (src/mcp/chat-tool-loop.ts), each round a
 * metered model call of the node, each tool call within the caller's allow-lists and in the
 * run's record. The node's usage is the sum of its rounds. A tool the node names that the
 * caller may not use, or whose server does not answer, fails the node naming it: the model is
 * never called with fewer tools than the agent gives it.
 */
async function toolLoopCall(node: LlmNode, context: ModelNodeContext, call: CheckedCall<'chat'>, body: JsonObject): Promise<{ completion: JsonObject }> {
  const { dependencies, budget } = context;
  if (dependencies.tools === undefined) throw new GatewayError('tool_not_found', `The agent's node "${node.id}" uses MCP tools, and this gateway serves none.`, { param: 'config.tools' });
  const servers = [...new Set(node.tools.map((name) => splitQualifiedName(name)!.server))];
  const source = await dependencies.tools.toolSource(dependencies.principal, {
    servers,
    allowedTools: node.tools,
    param: () => 'config.tools',
    onCallEnded: (ended) => dependencies.call.toolCalled(ended),
    request: { id: dependencies.call.requestId, guarded: (verdicts) => dependencies.call.guarded(verdicts) },
  });
  const rounds: { usage: TokenUsage | null; costMicroUsd: number | null }[] = [];
  const record = () =>
    context.recordUsage({
      node: node.id,
      type: 'llm',
      model: call.target.resolved.id,
      usage: addUsages(rounds.map((round) => round.usage)),
      images: null,
      costMicroUsd: rounds.some((round) => round.costMicroUsd !== null) ? rounds.reduce((sum, round) => sum + (round.costMicroUsd ?? 0), 0) : null,
    });
  try {
    const result = await runChatToolLoop({
      body,
      tools: source,
      complete: async (roundBody) => {
        budget.modelCallStarted();
        const metered = await dependencies.call.metered(
          dependencies.principal,
          call,
          estimateTokens(call.pricing, Buffer.byteLength(JSON.stringify(roundBody.messages)), node.maxTokens),
          (chat, attempt) => chat.complete({ ...attempt, body: roundBody, signal: budget.signal, requestId: dependencies.requestId }),
          budget.signal,
        );
        rounds.push({ usage: metered.usage, costMicroUsd: metered.costMicroUsd });
        return { completion: metered.result.completion, usage: metered.usage };
      },
      maxRounds: MAX_TOOL_ROUNDS,
      signal: budget.signal,
      serverOf: (name) => splitQualifiedName(name)?.server ?? null,
      onListed: (listed) => {
        const missing = node.tools.filter((name) => !name.endsWith('__*') && !listed.some((tool) => tool.name === name));
        if (missing.length > 0) {
          throw new GatewayError('tool_not_found', `The agent's node "${node.id}" uses MCP tools this key may not use, or that do not exist: ${missing.join(', ')}.`, { param: 'config.tools' });
        }
      },
    });
    return { completion: result.completion };
  } catch (error) {
    throw callFailure(context, error instanceof ToolLoopError ? toolLoopFailure(node, error) : error);
  } finally {
    record();
  }
}

function toolLoopFailure(node: LlmNode, error: ToolLoopError): unknown {
  if (error.failure instanceof GatewayError) return error.failure;
  if (error.stop === 'max_rounds') {
    return new GatewayError('provider_error', `The model of the agent's node "${node.id}" still asked for MCP tools after ${MAX_TOOL_ROUNDS} rounds.`, { logDetail: { node: node.id } });
  }
  return new GatewayError('mcp_server_unavailable', `The agent's node "${node.id}": ${error.message}`, { logDetail: { node: node.id, mcp_servers: error.servers } });
}

export async function runImageNode(node: ImageNode, context: ModelNodeContext): Promise<{ prompt: string; images: GeneratedImage[] }> {
  const { dependencies, budget } = context;
  const call = dependencies.call.subcall({ mode: 'image_generation', model: node.model, capability: 'images', param: 'config.model', purpose: `node:${node.id}` });
  const prompt = rendered(context, node.prompt);
  const body: JsonObject = { prompt, n: node.n, response_format: 'b64_json' };
  if (node.size !== null) body.size = node.size;
  const result = await meteredCall(
    context,
    { id: node.id, type: 'image' },
    call,
    estimateImages(call.pricing, prompt, node.n),
    (images, attempt) => images.generate({ ...attempt, body, signal: budget.signal, requestId: dependencies.requestId }),
    (answer) => answer.imageCount,
  );
  const data = Array.isArray(result.response.data) ? result.response.data : [];
  const generated: GeneratedImage[] = [];
  for (const item of data.slice(0, node.n)) {
    if (!isPlainObject(item)) continue;
    if (typeof item.b64_json === 'string') generated.push(await dependencies.media.storeGenerated({ data: Buffer.from(item.b64_json, 'base64') }, node.id));
    else if (typeof item.url === 'string') generated.push(await dependencies.media.storeGenerated({ url: item.url }, node.id));
  }
  if (generated.length === 0) {
    throw new GatewayError('provider_error', `The image model of the agent's node "${node.id}" returned no image.`, { logDetail: { node: node.id } });
  }
  return { prompt, images: generated };
}
