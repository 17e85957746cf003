import { invalidBody, unsupportedField } from '../../errors/index.js';
import type { ChatCall, JsonObject } from '../../model-api/index.js';
import { reasoningOf, thinkingBudgetOf, topKOf } from '../shared/reasoning.js';
import { ownSignature } from '../shared/signatures.js';
import { toolArgumentsObject } from '../shared/caller-values.js';
import { isRecord, textOf } from '../shared/message-content.js';
import { textParts, userParts } from './content-parts.js';
import { toGeminiSchema } from './json-schema.js';
import type { GeminiContent, GeminiFunctionDeclaration, GeminiGenerationConfig, GeminiPart, GeminiThinkingConfig, GenerateContentRequest } from './wire.js';

/*
 * OpenAI chat-completions body → Gemini generateContent request: system messages become the
 * systemInstruction, history roles user/assistant become user/model, assistant tool calls and
 * tool results become functionCall/functionResponse parts, sampling fields go to
 * generationConfig, tools and tool_choice to tools/toolConfig.
 */

/**
 * The call's reasoning as Gemini's thinkingConfig: a level for Gemini 3 models (low up to a
 * medium effort or an 8k budget, else high), a budget for the others (-1, dynamic, when the
 * model decides; `none` is 0, which Pro models do not take, so they get their least, 128); and
 * the thought summaries when the caller wants the reasoning shown.
 */
function thinkingConfigOf(call: MappedCall, model: string): GeminiThinkingConfig | undefined {
  const reasoning = reasoningOf(call);
  if (reasoning === null) return undefined;
  const budget = thinkingBudgetOf(reasoning);
  const shown = reasoning.includeThoughts ? { includeThoughts: true } : {};
  if (/^gemini-3/.test(model)) return { thinkingLevel: budget !== null && budget <= LOW_LEVEL_BUDGET ? 'low' : 'high', ...shown };
  const floor = /-pro/.test(model) ? PRO_MIN_BUDGET : 0;
  return { thinkingBudget: budget === null ? -1 : Math.max(budget, floor), ...shown };
}

const LOW_LEVEL_BUDGET = 8_192;

/**
 * Whether the request carries Google Search: asked for, and on a model that can search beside the
 * caller's functions (Gemini 2.x takes built-in tools only without function declarations). A
 * coding agent declares search beside its functions and answers fine without it, so there it is
 * dropped and named (searchDropped), not refused.
 */
function searches(call: MappedCall, model: string): boolean {
  return call.extensions?.webSearch !== undefined && !searchDropped(call, model);
}

/** The web search the request leaves out (see `searches`), by the caller's param; null when none is. */
export function searchDropped(call: MappedCall, model: string): string | null {
  const search = call.extensions?.webSearch;
  if (search === undefined || /^gemini-3/.test(model)) return null;
  return Array.isArray(call.body.tools) && call.body.tools.length > 0 ? search.param : null;
}
const PRO_MIN_BUDGET = 128;

/** The call as the mapping reads it: the chat body and its extensions. */
export type MappedCall = Pick<ChatCall, 'body' | 'extensions'>;

export function toGenerateContentRequest(call: MappedCall, model = '', provider = ''): GenerateContentRequest {
  const { body } = call;
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw invalidBody('messages must be a non-empty array.', 'messages');
  // The answer's mapping carries no log probabilities: asked for, they would be missing without a word.
  if (body.logprobs === true) throw unsupportedField('logprobs: this model does not return log probabilities; leave logprobs out, or pick an OpenAI model.', 'logprobs');
  const { contents, system } = mapMessages(body.messages, provider);
  if (contents.length === 0) throw invalidBody('messages must contain at least one user or assistant message.', 'messages');
  const request: GenerateContentRequest = { contents };
  if (system.length > 0) request.systemInstruction = { parts: system };
  const generationConfig = toGenerationConfig(body);
  const topK = topKOf(call);
  if (topK !== null) generationConfig.topK = topK;
  const thinkingConfig = thinkingConfigOf(call, model);
  if (thinkingConfig !== undefined) generationConfig.thinkingConfig = thinkingConfig;
  if (Object.keys(generationConfig).length > 0) request.generationConfig = generationConfig;
  const declarations = toFunctionDeclarations(body.tools);
  const tools: NonNullable<GenerateContentRequest['tools']> = declarations.length > 0 ? [{ functionDeclarations: declarations }] : [];
  // Google Search grounding: Gemini's own web search, which takes no domain filters or limit.
  if (searches(call, model)) tools.push({ googleSearch: {} });
  if (tools.length > 0) request.tools = tools;
  const toolConfig = toToolConfig(body.tool_choice);
  if (toolConfig !== undefined) request.toolConfig = toolConfig;
  return request;
}

function mapMessages(messages: unknown[], provider: string): { contents: GeminiContent[]; system: GeminiPart[] } {
  const contents: GeminiContent[] = [];
  const system: GeminiPart[] = [];
  /** Tool call id → function name: Gemini's functionResponse is matched by name, OpenAI's by id. */
  const toolNames = new Map<string, string>();
  const append = (role: GeminiContent['role'], parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    // Gemini wants the results of parallel calls in one turn, and alternating turns in general.
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((message, index) => {
    const param = `messages[${index}]`;
    if (!isRecord(message)) throw invalidBody(`${param} must be an object with a role.`, param);
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...textParts(textOf(message.content, `${param}.content`)));
        break;
      case 'user':
        append('user', userParts(message.content, `${param}.content`));
        break;
      case 'assistant':
        append('model', assistantParts(message, param, toolNames, provider));
        break;
      case 'tool':
        append('user', [functionResponsePart(message, param, toolNames)]);
        break;
      default:
        throw invalidBody(`${param}.role must be system, developer, user, assistant or tool.`, `${param}.role`);
    }
  });
  return { contents, system };
}

function assistantParts(message: Record<string, unknown>, param: string, toolNames: Map<string, string>, provider: string): GeminiPart[] {
  const parts = textParts(textOf(message.content, `${param}.content`));
  if (message.tool_calls === undefined || message.tool_calls === null) return parts;
  if (!Array.isArray(message.tool_calls)) throw invalidBody(`${param}.tool_calls must be an array.`, `${param}.tool_calls`);
  message.tool_calls.forEach((call, index) => {
    const callParam = `${param}.tool_calls[${index}]`;
    const fn = isRecord(call) ? call.function : undefined;
    if (!isRecord(call) || !isRecord(fn) || typeof fn.name !== 'string') {
      throw invalidBody(`${callParam} must be a function tool call with function.name and function.arguments.`, callParam);
    }
    if (typeof call.id === 'string') toolNames.set(call.id, fn.name);
    const part: GeminiPart = { functionCall: { name: fn.name, args: toolArgumentsObject(fn.arguments, `${callParam}.function.arguments`) } };
    const signature = thoughtSignatureOf(call);
    if (signature !== undefined) part.thoughtSignature = signature;
    parts.push(part);
  });
  // A turn that came back through the Messages or Responses API carries its signature as the
  // reasoning's (see turnSignatureOf): it goes on the first call, where Gemini 3 requires it.
  const turnSignature = ownSignature(message.reasoning_signature, provider);
  const firstCall = parts.find((part) => part.functionCall !== undefined);
  if (turnSignature !== null && firstCall !== undefined && !parts.some((part) => part.thoughtSignature !== undefined)) firstCall.thoughtSignature = turnSignature;
  return parts;
}

/** The signature the gateway handed out with a tool call (see response-mapping.ts), returned to Gemini. */
function thoughtSignatureOf(call: Record<string, unknown>): string | undefined {
  const google = isRecord(call.extra_content) ? call.extra_content.google : undefined;
  return isRecord(google) && typeof google.thought_signature === 'string' ? google.thought_signature : undefined;
}

function functionResponsePart(message: Record<string, unknown>, param: string, toolNames: Map<string, string>): GeminiPart {
  const id = message.tool_call_id;
  const name = typeof id === 'string' ? toolNames.get(id) : undefined;
  if (name === undefined) {
    throw invalidBody(`${param}.tool_call_id must be the id of a tool call in an earlier assistant message.`, `${param}.tool_call_id`);
  }
  const text = textOf(message.content, `${param}.content`);
  return { functionResponse: { name, response: toolResult(text) } };
}

/** Gemini's functionResponse.response is an object: a JSON object result as is, anything else wrapped. */
function toolResult(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) return parsed;
    return { result: parsed };
  } catch {
    return { result: text };
  }
}

function numberField(body: JsonObject, name: string): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidBody(`${name} must be a number.`, name);
  return value;
}

function toGenerationConfig(body: JsonObject): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  const set = <K extends keyof GeminiGenerationConfig>(key: K, value: GeminiGenerationConfig[K] | undefined) => {
    if (value !== undefined) config[key] = value;
  };
  set('temperature', numberField(body, 'temperature'));
  set('topP', numberField(body, 'top_p'));
  set('maxOutputTokens', numberField(body, 'max_completion_tokens') ?? numberField(body, 'max_tokens'));
  set('candidateCount', numberField(body, 'n'));
  set('seed', numberField(body, 'seed'));
  set('presencePenalty', numberField(body, 'presence_penalty'));
  set('frequencyPenalty', numberField(body, 'frequency_penalty'));
  set('stopSequences', stopSequences(body.stop));
  Object.assign(config, responseFormat(body.response_format));
  return config;
}

function stopSequences(stop: unknown): string[] | undefined {
  if (stop === undefined || stop === null) return undefined;
  if (typeof stop === 'string') return [stop];
  if (Array.isArray(stop) && stop.every((item) => typeof item === 'string')) return stop;
  throw invalidBody('stop must be a string or an array of strings.', 'stop');
}

function responseFormat(format: unknown): Pick<GeminiGenerationConfig, 'responseMimeType' | 'responseSchema'> {
  if (format === undefined || format === null) return {};
  if (!isRecord(format)) throw invalidBody('response_format must be an object with a type.', 'response_format');
  switch (format.type) {
    case 'text':
      return {};
    case 'json_object':
      return { responseMimeType: 'application/json' };
    case 'json_schema': {
      const schema = isRecord(format.json_schema) ? format.json_schema.schema : undefined;
      if (schema === undefined) return { responseMimeType: 'application/json' };
      return { responseMimeType: 'application/json', responseSchema: toGeminiSchema(schema, 'response_format.json_schema.schema') };
    }
    default:
      throw invalidBody('response_format.type must be text, json_object or json_schema.', 'response_format.type');
  }
}

function toFunctionDeclarations(tools: unknown): GeminiFunctionDeclaration[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw invalidBody('tools must be an array.', 'tools');
  return tools.map((tool, index) => {
    const param = `tools[${index}]`;
    const fn = isRecord(tool) ? tool.function : undefined;
    if (!isRecord(tool) || tool.type !== 'function' || !isRecord(fn) || typeof fn.name !== 'string') {
      throw invalidBody(`${param} must be a function tool ({"type": "function", "function": {"name", …}}); other tool types are not supported for this model.`, param);
    }
    const declaration: GeminiFunctionDeclaration = { name: fn.name };
    if (typeof fn.description === 'string') declaration.description = fn.description;
    // Gemini rejects an OBJECT schema without properties, so a function without parameters declares none.
    if (isRecord(fn.parameters) && isRecord(fn.parameters.properties) && Object.keys(fn.parameters.properties).length > 0) {
      declaration.parameters = toGeminiSchema(fn.parameters, `${param}.function.parameters`);
    }
    return declaration;
  });
}

function toToolConfig(choice: unknown): GenerateContentRequest['toolConfig'] {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  const fn = isRecord(choice) ? choice.function : undefined;
  if (isRecord(choice) && choice.type === 'function' && isRecord(fn) && typeof fn.name === 'string') {
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [fn.name] } };
  }
  throw invalidBody('tool_choice must be "auto", "none", "required" or {"type": "function", "function": {"name": …}}.', 'tool_choice');
}
