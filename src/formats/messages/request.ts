import { invalidBody } from '../../errors/index.js';
import type { CallExtensions, JsonObject, ReasoningEffort, ReasoningRequest } from '../../model-api/index.js';
import type { DecodedCall } from '../types.js';
import { refuseUntranslatableFields, sortUntranslatedFields, type Untranslatable } from '../untranslatable.js';

/** The fields of a Messages API request the gateway reads; the route's schema checks only what the gateway needs. */
export interface MessagesBody extends JsonObject {
  model: string;
  messages: { role: string; content: string | JsonObject[] }[];
  max_tokens?: number;
  stream?: boolean | null;
  system?: string | JsonObject[];
}

/** A field the internal call cannot carry, and dropping it would change the answer: refused unless the provider speaks the Messages API itself. */
export interface MessagesDecodedCall extends DecodedCall {
  /** Fields with no equivalent in the internal call (decodeRequest is lenient; see refuseUntranslatable). */
  untranslatable: Untranslatable[];
  /** The caller's request, for the prompt's estimate when nothing better is known (count.ts). */
  source: MessagesBody;
}

type Block = JsonObject;

/** Request fields translated into the internal chat call (or read for its extensions). */
const TRANSLATED_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'stream',
  'stop_sequences',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'metadata',
  'thinking',
  'output_config',
]);

/**
 * Fields that only tune how Anthropic serves a request (decisions §9 rule 2): dropped for other
 * providers and named. A field the gateway does not know yet is treated alike: the answer the
 * caller relies on comes from what is translated.
 */
const REFUSED_FIELDS: Record<string, string> = {
  mcp_servers: 'remote MCP servers, which only Anthropic connects to',
  container: 'a code execution container, which only Anthropic runs',
};

/** Anthropic's server tools that are web search: served by the target vendor's own search tool. */
const WEB_SEARCH_TOOL = /^web_search_\d{8}$/;

/** Output efforts of `output_config.effort` (Anthropic's effort page). */
const EFFORTS = new Set<ReasoningEffort>(['low', 'medium', 'high', 'max']);

/**
 * A Messages API request as the internal chat call (OpenAI's shape): system as a system message
 * (and a `system` message anywhere in the conversation as a system message in its place),
 * `tool_result` blocks as `tool` messages, `tool_use` blocks as `tool_calls`, thinking blocks as
 * the assistant's reasoning (with their signatures), images and PDFs as image_url and file parts,
 * tools, tool_choice, stop_sequences → stop, metadata.user_id → user, `output_config.format` →
 * response_format; `thinking` / `output_config.effort` as the reasoning extension, `top_k` and
 * web search as theirs. Hints to Anthropic's own service are listed in `dropped`. Lenient: what
 * has no equivalent (code execution, computer use, …) is listed, not refused, because a provider
 * that speaks the Messages API natively takes the request as it is; the route refuses it for the
 * others (refuseUntranslatable).
 */
export function decodeMessagesRequest(body: MessagesBody): MessagesDecodedCall {
  const decoder = new Decoder();
  const chat: JsonObject = { messages: decoder.messages(body) };
  const extensions: CallExtensions = {};
  sortUntranslatedFields(body, TRANSLATED_FIELDS, REFUSED_FIELDS, decoder);
  if (body.max_tokens !== undefined) chat.max_completion_tokens = body.max_tokens;
  if (Array.isArray(body.stop_sequences)) chat.stop = body.stop_sequences;
  if (typeof body.temperature === 'number') chat.temperature = body.temperature;
  if (typeof body.top_p === 'number') chat.top_p = body.top_p;
  if (typeof body.top_k === 'number') extensions.topK = { param: 'top_k', value: body.top_k };
  const metadata = body.metadata as Block | undefined;
  if (typeof metadata?.user_id === 'string') chat.user = metadata.user_id;
  if (isRecord(metadata)) for (const key in metadata) if (key !== 'user_id') decoder.dropped.push(`metadata.${key}`);
  if (Array.isArray(body.tools)) {
    const tools: JsonObject[] = [];
    body.tools.forEach((tool, index) => {
      const mapped = decoder.tool(tool as Block, `tools[${index}]`, extensions);
      if (mapped !== null) tools.push(mapped);
    });
    if (tools.length > 0) chat.tools = tools;
  }
  if (typeof body.tool_choice === 'object' && body.tool_choice !== null) Object.assign(chat, toolChoiceOf(body.tool_choice as Block));
  const reasoning = reasoningOf(body);
  if (reasoning !== null) extensions.reasoning = reasoning;
  Object.assign(chat, decoder.outputConfig(body.output_config));
  return {
    model: body.model,
    stream: body.stream === true,
    body: chat,
    maxOutputTokens: body.max_tokens ?? null,
    choices: 1,
    untranslatable: decoder.untranslatable,
    source: body,
    dropped: decoder.dropped,
    extensions: Object.keys(extensions).length > 0 ? extensions : undefined,
  };
}

/**
 * `thinking` (enabled with its budget, or adaptive) and `output_config.effort` as the reasoning
 * the caller asked for; null for none (`thinking` absent or disabled, and no effort: the model's
 * own default, which for Claude is not to think).
 */
function reasoningOf(body: MessagesBody): ReasoningRequest | null {
  const thinking = isRecord(body.thinking) ? body.thinking : null;
  const effortValue = isRecord(body.output_config) ? body.output_config.effort : undefined;
  if (effortValue !== undefined && !EFFORTS.has(effortValue as ReasoningEffort)) {
    throw invalidBody('output_config.effort must be one of "low", "medium", "high", "max".', 'output_config.effort');
  }
  const effort = (effortValue as ReasoningEffort | undefined) ?? null;
  const shown = thinking?.display !== 'omitted';
  switch (thinking?.type) {
    case 'enabled': {
      const budget = thinking.budget_tokens;
      if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1) throw invalidBody('thinking.budget_tokens must be a positive integer.', 'thinking.budget_tokens');
      return { param: 'thinking', effort, budgetTokens: budget, includeThoughts: shown };
    }
    case 'adaptive':
      return { param: 'thinking', effort, budgetTokens: null, includeThoughts: shown };
    case 'disabled':
    case undefined:
      return effort === null ? null : { param: 'output_config.effort', effort, budgetTokens: null, includeThoughts: false };
    default:
      throw invalidBody('thinking.type must be one of "enabled", "adaptive", "disabled".', 'thinking.type');
  }
}

/** Throws the 400 naming the first field the internal call cannot carry, if any. */
export function refuseUntranslatable(decoded: MessagesDecodedCall): void {
  refuseUntranslatableFields(decoded.untranslatable, 'the Messages API');
}

function toolChoiceOf(choice: Block): JsonObject {
  const parallel = choice.disable_parallel_tool_use === true ? { parallel_tool_calls: false } : {};
  switch (choice.type) {
    case 'any':
      return { tool_choice: 'required', ...parallel };
    case 'tool':
      return { tool_choice: { type: 'function', function: { name: choice.name } }, ...parallel };
    case 'none':
      return { tool_choice: 'none' };
    case 'auto':
      return { tool_choice: 'auto', ...parallel };
    default:
      throw invalidBody('tool_choice.type must be one of "auto", "any", "tool", "none".', 'tool_choice.type');
  }
}

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class Decoder {
  readonly untranslatable: Untranslatable[] = [];
  readonly dropped: string[] = [];

  messages(body: MessagesBody): JsonObject[] {
    const out: JsonObject[] = [];
    if (body.system !== undefined) {
      const system = typeof body.system === 'string' ? body.system : this.texts(body.system, 'system');
      if (system.length > 0) out.push({ role: 'system', content: system });
    }
    body.messages.forEach((message, index) => {
      const param = `messages[${index}]`;
      if (typeof message !== 'object' || message === null) throw invalidBody(`${param} must be a message object with role and content.`, param);
      const content = `${param}.content`;
      switch (message.role) {
        case 'system': {
          // A system message mid-conversation (Claude Code's, beta mid-conversation-system): kept in its place.
          const text = typeof message.content === 'string' ? message.content : this.texts(message.content, content);
          if (text.length > 0) out.push({ role: 'system', content: text });
          return;
        }
        case 'assistant':
          out.push(typeof message.content === 'string' ? { role: 'assistant', content: message.content } : this.assistant(message.content, content));
          return;
        case 'user':
          if (typeof message.content === 'string') out.push({ role: 'user', content: message.content });
          else out.push(...this.user(message.content, content));
          return;
        default:
          throw invalidBody(`${param}.role must be one of "user", "assistant", "system" for this model.`, `${param}.role`);
      }
    });
    return out;
  }

  /**
   * A tool as a chat function; web search as the web search extension (null: no function);
   * another server tool is listed as untranslatable.
   */
  tool(tool: Block, param: string, extensions: CallExtensions): JsonObject | null {
    this.hint(tool, param);
    if (typeof tool.type === 'string' && WEB_SEARCH_TOOL.test(tool.type)) {
      extensions.webSearch = {
        param,
        maxUses: typeof tool.max_uses === 'number' ? tool.max_uses : null,
        allowedDomains: stringList(tool.allowed_domains),
        blockedDomains: stringList(tool.blocked_domains),
      };
      if (tool.user_location !== undefined) this.dropped.push(`${param}.user_location`);
      return null;
    }
    if (tool.type !== undefined && tool.type !== 'custom') {
      this.untranslatable.push({ param: `${param}.type`, what: `a server tool (${String(tool.type)}) that only Anthropic runs` });
    }
    if (typeof tool.name !== 'string') throw invalidBody(`${param}.name is required.`, `${param}.name`);
    return {
      type: 'function',
      function: {
        name: tool.name,
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        parameters: tool.input_schema ?? { type: 'object', properties: {} },
        ...(typeof tool.strict === 'boolean' ? { strict: tool.strict } : {}),
      },
    };
  }

  /** `output_config`: its format as response_format; effort is read as reasoning; any other member is dropped. */
  outputConfig(config: unknown): JsonObject {
    if (!isRecord(config)) return {};
    const chat: JsonObject = {};
    for (const [key, value] of Object.entries(config)) {
      if (key === 'effort' || value === undefined || value === null) continue;
      if (key !== 'format') {
        this.dropped.push(`output_config.${key}`);
        continue;
      }
      if (!isRecord(value) || value.type !== 'json_schema' || !isRecord(value.schema)) {
        throw invalidBody('output_config.format must be {"type": "json_schema", "schema": {…}}.', 'output_config.format');
      }
      chat.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: value.schema } };
    }
    return chat;
  }

  /** An assistant turn: its text as content, its tool_use blocks as tool_calls, its thinking as reasoning. */
  private assistant(blocks: Block[], param: string): JsonObject {
    let text = '';
    let reasoning = '';
    let signature: string | undefined;
    const toolCalls: JsonObject[] = [];
    blocks.forEach((block, index) => {
      const at = `${param}[${index}]`;
      this.hint(block, at);
      switch (block.type) {
        case 'text':
          text += stringField(block, 'text', at);
          return;
        case 'tool_use':
          toolCalls.push({ id: stringField(block, 'id', at), type: 'function', function: { name: stringField(block, 'name', at), arguments: JSON.stringify(block.input ?? {}) } });
          return;
        case 'thinking':
          // An earlier turn's thinking: its provider gets it back with its signature; another leaves it out.
          reasoning += stringField(block, 'thinking', at);
          if (typeof block.signature === 'string' && block.signature.length > 0) signature = block.signature;
          return;
        case 'redacted_thinking':
        case 'server_tool_use':
        case 'web_search_tool_result':
          // State of Anthropic's own service (encrypted thinking, its searches): nothing another model can read.
          this.dropped.push(at);
          return;
        default:
          this.untranslatable.push({ param: `${at}.type`, what: `a ${String(block.type)} block` });
      }
    });
    return {
      role: 'assistant',
      content: text.length > 0 ? text : null,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      ...(reasoning.length > 0 ? { reasoning_content: reasoning } : {}),
      ...(signature !== undefined ? { reasoning_signature: signature } : {}),
    };
  }

  /** A user turn: its tool results first (each a `tool` message, answering the turn before), then its other blocks as parts. */
  private user(blocks: Block[], param: string): JsonObject[] {
    if (!Array.isArray(blocks)) throw invalidBody(`${param} must be a string or an array of content blocks.`, param);
    const toolMessages: JsonObject[] = [];
    const parts: JsonObject[] = [];
    blocks.forEach((block, index) => {
      const at = `${param}[${index}]`;
      if (!isRecord(block)) throw invalidBody(`${at} must be a content block object with a "type".`, at);
      this.hint(block, at);
      if (block.type === 'tool_result') toolMessages.push(this.toolResult(block, at));
      else parts.push(this.part(block, at));
    });
    return parts.length > 0 ? [...toolMessages, { role: 'user', content: parts }] : toolMessages;
  }

  /** A tool result as a `tool` message; one the tool reported as failed says so in its text, which is all the internal call carries. */
  private toolResult(block: Block, param: string): JsonObject {
    const content = block.content === undefined ? '' : typeof block.content === 'string' ? block.content : this.texts(block.content as Block[], `${param}.content`);
    return { role: 'tool', tool_call_id: stringField(block, 'tool_use_id', param), content: block.is_error === true ? `Error: ${content}` : content };
  }

  private part(block: Block, param: string): JsonObject {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: stringField(block, 'text', param) };
      case 'image': {
        const source = sourceOf(block, param);
        if (source.type === 'base64') return { type: 'image_url', image_url: { url: `data:${stringField(source, 'media_type', `${param}.source`)};base64,${stringField(source, 'data', `${param}.source`)}` } };
        if (source.type === 'url') return { type: 'image_url', image_url: { url: stringField(source, 'url', `${param}.source`) } };
        throw invalidBody(`${param}.source.type must be "base64" or "url".`, `${param}.source.type`);
      }
      case 'document': {
        const source = sourceOf(block, param);
        if (source.type === 'base64') {
          const mediaType = stringField(source, 'media_type', `${param}.source`);
          return { type: 'file', file: { filename: typeof block.title === 'string' ? block.title : 'document.pdf', file_data: `data:${mediaType};base64,${stringField(source, 'data', `${param}.source`)}` } };
        }
        if (source.type === 'text') return { type: 'text', text: stringField(source, 'data', `${param}.source`) };
        this.untranslatable.push({ param: `${param}.source.type`, what: `a ${String(source.type)} document source` });
        return { type: 'text', text: '' };
      }
      default:
        this.untranslatable.push({ param: `${param}.type`, what: `a ${String(block.type)} block` });
        return { type: 'text', text: '' };
    }
  }

  /** Text blocks joined (system, tool results); other blocks have no place there. */
  private texts(blocks: Block[], param: string): string {
    if (!Array.isArray(blocks)) throw invalidBody(`${param} must be a string or an array of text blocks.`, param);
    return blocks
      .map((block, index) => {
        const at = `${param}[${index}]`;
        if (!isRecord(block)) throw invalidBody(`${at} must be a content block object with a "type".`, at);
        this.hint(block, at);
        if (block.type === 'text') return stringField(block, 'text', at);
        this.untranslatable.push({ param: `${at}.type`, what: `a ${String(block.type)} block here` });
        return '';
      })
      .join('\n');
  }

  /** `cache_control` is a caching hint to Anthropic's service: other providers cache on their own terms. */
  private hint(block: Block, param: string): void {
    if (block.cache_control !== undefined) this.dropped.push(`${param}.cache_control`);
  }
}

function stringList(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : null;
}

function sourceOf(block: Block, param: string): Block {
  const source = block.source;
  if (typeof source !== 'object' || source === null) throw invalidBody(`${param}.source is required.`, `${param}.source`);
  return source as Block;
}

function stringField(block: Block, key: string, param: string): string {
  const value = block[key];
  if (typeof value !== 'string') throw invalidBody(`${param}.${key} must be a string.`, `${param}.${key}`);
  return value;
}
