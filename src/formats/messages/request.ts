import { invalidBody } from '../../errors/index.js';
import type { JsonObject } from '../../model-api/index.js';
import type { DecodedCall } from '../types.js';

/** The fields of a Messages API request the gateway reads; the schema in the route checks their types. */
export interface MessagesBody extends JsonObject {
  model: string;
  messages: { role: 'user' | 'assistant'; content: string | JsonObject[] }[];
  max_tokens?: number;
  stream?: boolean | null;
  system?: string | JsonObject[];
}

/** A field the internal call has no equivalent for: refused unless the provider speaks the Messages API itself. */
export interface Untranslatable {
  param: string;
  /** What the field is, for the message: "thinking", "a server tool (web_search_20250305)". */
  what: string;
}

export interface MessagesDecodedCall extends DecodedCall {
  /** Fields with no equivalent in the internal call (decodeRequest is lenient; see refuseUntranslatable). */
  untranslatable: Untranslatable[];
  /** Hints the internal call drops (`cache_control`, `service_tier`), by field, for the request log. */
  dropped: string[];
}

type Block = JsonObject;

/** Request fields translated into the internal chat call. */
const TRANSLATED_FIELDS = new Set(['model', 'messages', 'system', 'max_tokens', 'stream', 'stop_sequences', 'temperature', 'top_p', 'tools', 'tool_choice', 'metadata']);
/** Request fields that are hints to Anthropic's own service, dropped for other providers (as its SDKs treat them). */
const HINT_FIELDS = new Set(['service_tier']);

/**
 * A Messages API request as the internal chat call (OpenAI's shape): system as the first
 * message, `tool_result` blocks as `tool` messages, `tool_use` blocks as `tool_calls`,
 * images and PDFs as image_url and file parts, tools, tool_choice, stop_sequences → stop,
 * metadata.user_id → user. Lenient: what has no equivalent (thinking, top_k, server tools,
 * …) is listed, not refused, because a provider that speaks the Messages API natively takes
 * the request as it is; the route refuses it for the others (refuseUntranslatable).
 */
export function decodeMessagesRequest(body: MessagesBody): MessagesDecodedCall {
  const decoder = new Decoder();
  const chat: JsonObject = { messages: decoder.messages(body) };
  for (const key of Object.keys(body)) {
    if (HINT_FIELDS.has(key)) decoder.dropped.push(key);
    else if (!TRANSLATED_FIELDS.has(key) && !(key === 'thinking' && (body.thinking as Block | null)?.type === 'disabled')) decoder.untranslatable.push({ param: key, what: key });
  }
  if (body.max_tokens !== undefined) chat.max_completion_tokens = body.max_tokens;
  if (Array.isArray(body.stop_sequences)) chat.stop = body.stop_sequences;
  if (typeof body.temperature === 'number') chat.temperature = body.temperature;
  if (typeof body.top_p === 'number') chat.top_p = body.top_p;
  const userId = (body.metadata as Block | undefined)?.user_id;
  if (typeof userId === 'string') chat.user = userId;
  if (Array.isArray(body.tools)) chat.tools = body.tools.map((tool, index) => decoder.tool(tool as Block, `tools[${index}]`));
  if (typeof body.tool_choice === 'object' && body.tool_choice !== null) Object.assign(chat, toolChoiceOf(body.tool_choice as Block));
  return {
    model: body.model,
    stream: body.stream === true,
    body: chat,
    maxOutputTokens: body.max_tokens ?? null,
    choices: 1,
    untranslatable: decoder.untranslatable,
    dropped: decoder.dropped,
  };
}

/** Throws the 400 naming the first field the internal call cannot carry, if any. */
export function refuseUntranslatable(decoded: MessagesDecodedCall): void {
  const first = decoded.untranslatable[0];
  if (first === undefined) return;
  throw invalidBody(
    `${first.param}: ${first.what} has no equivalent for this model's provider, which does not speak the Messages API itself. Remove it, or pick a model whose provider does.`,
    first.param,
  );
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
      const param = `messages[${index}].content`;
      if (typeof message.content === 'string') out.push({ role: message.role, content: message.content });
      else if (message.role === 'assistant') out.push(this.assistant(message.content, param));
      else out.push(...this.user(message.content, param));
    });
    return out;
  }

  tool(tool: Block, param: string): JsonObject {
    this.hint(tool, param);
    if (tool.type !== undefined && tool.type !== 'custom') {
      this.untranslatable.push({ param: `${param}.type`, what: `a server tool (${String(tool.type)})` });
    }
    if (typeof tool.name !== 'string') throw invalidBody(`${param}.name is required.`, `${param}.name`);
    return {
      type: 'function',
      function: {
        name: tool.name,
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        parameters: tool.input_schema ?? { type: 'object', properties: {} },
      },
    };
  }

  /** An assistant turn: its text as content, its tool_use blocks as tool_calls. */
  private assistant(blocks: Block[], param: string): JsonObject {
    let text = '';
    const toolCalls: JsonObject[] = [];
    blocks.forEach((block, index) => {
      const at = `${param}[${index}]`;
      this.hint(block, at);
      if (block.type === 'text') text += stringField(block, 'text', at);
      else if (block.type === 'tool_use') {
        toolCalls.push({ id: stringField(block, 'id', at), type: 'function', function: { name: stringField(block, 'name', at), arguments: JSON.stringify(block.input ?? {}) } });
      } else this.untranslatable.push({ param: `${at}.type`, what: `a ${String(block.type)} block` });
    });
    return { role: 'assistant', content: text.length > 0 ? text : null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
  }

  /** A user turn: its tool results first (each a `tool` message, answering the turn before), then its other blocks as parts. */
  private user(blocks: Block[], param: string): JsonObject[] {
    const toolMessages: JsonObject[] = [];
    const parts: JsonObject[] = [];
    blocks.forEach((block, index) => {
      const at = `${param}[${index}]`;
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
        if (typeof block !== 'object' || block === null) throw invalidBody(`${at} must be a content block object with a "type".`, at);
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
