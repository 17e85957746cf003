import { invalidBody } from '../../errors/index.js';
import type { JsonObject } from '../../model-api/index.js';
import { newResponsesId } from './ids.js';

/**
 * The Responses request decoder: a `POST /v1/responses` body (input items, instructions,
 * function tools, tool_choice, text.format, sampling and length) as the internal chat
 * request every provider takes. Pure: the stored conversation of `previous_response_id` is
 * handed in as items. A field that has no chat equivalent is a 400 naming it; the fields
 * OpenAI's own SDKs send as hints (below) are dropped and named in `dropped` for the log.
 */

/** What the request decoder made of a body. */
export interface DecodedResponsesRequest {
  /** The chat request body (without `model` and `stream`): messages, tools, tool_choice, response_format, … */
  chat: JsonObject;
  /** Top-level fields dropped because only OpenAI's own models act on them. */
  dropped: string[];
}

/** Members of the body the gateway itself reads (not translated): the route's and the store's. */
const GATEWAY_FIELDS = new Set(['model', 'provider', 'stream', 'store', 'previous_response_id', 'metadata', 'input', 'instructions', 'background']);

/** Fields translated into the chat request: each has a case in `chatFields`. */
const TRANSLATED_FIELDS = new Set(['tools', 'tool_choice', 'max_output_tokens', 'temperature', 'top_p', 'text', 'parallel_tool_calls', 'user']);

/**
 * Fields OpenAI's SDKs and agents send that steer only OpenAI's own service (what to include in
 * the answer, truncation, caching, tiers, reasoning effort): dropped for other providers, as
 * their own clients do, and recorded.
 */
const HINT_FIELDS = new Set(['include', 'truncation', 'service_tier', 'prompt_cache_key', 'safety_identifier', 'reasoning', 'stream_options', 'top_logprobs']);

const MESSAGE_ROLES = new Set(['user', 'system', 'developer', 'assistant']);

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The conversation a request continues and adds to, as Responses items. */
export interface ResponsesConversation {
  /** The stored conversation of `previous_response_id` (its input items and output), or none. */
  history: readonly JsonObject[];
  /** This request's input, as `inputItemsOf` made it. */
  input: readonly JsonObject[];
}

/** Decodes a body whose conversation (stored history and own input) was read already. */
export function decodeResponsesRequest(body: JsonObject, conversation: ResponsesConversation): DecodedResponsesRequest {
  const dropped: string[] = [];
  for (const field of Object.keys(body)) {
    if (GATEWAY_FIELDS.has(field) || TRANSLATED_FIELDS.has(field) || body[field] === undefined || body[field] === null) continue;
    if (HINT_FIELDS.has(field)) {
      dropped.push(field);
      continue;
    }
    throw invalidBody(`${field} is not supported for this model: only OpenAI's own models take it. Remove it, or pick an OpenAI model.`, field);
  }
  const messages: JsonObject[] = [];
  if (body.instructions !== undefined && body.instructions !== null) {
    if (typeof body.instructions !== 'string') throw invalidBody('instructions must be a string.', 'instructions');
    messages.push({ role: 'system', content: body.instructions });
  }
  appendItems(messages, conversation.history, 'previous_response_id', dropped);
  appendItems(messages, conversation.input, 'input', dropped);
  if (messages.length === 0) throw invalidBody('input must hold at least one message.', 'input');
  return { chat: { messages, ...chatFields(body) }, dropped };
}

/**
 * The input as items, each with an id (the API lists them by id): a string is one user
 * message, and a message's string content becomes one text part. Other items keep their
 * fields as sent (a provider with its own Responses API gets them untouched).
 */
export function inputItemsOf(input: unknown): JsonObject[] {
  if (typeof input === 'string') return [{ id: newResponsesId('msg'), type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  if (!Array.isArray(input)) throw invalidBody('input must be a string or an array of input items.', 'input');
  return input.map((item: unknown, index) => {
    const param = `input[${index}]`;
    if (!isRecord(item)) throw invalidBody(`${param} must be an input item object.`, param);
    const type = item.type ?? 'message';
    if (type !== 'message') return typeof item.id === 'string' ? item : { id: newResponsesId('item'), ...item };
    if (typeof item.role !== 'string' || !MESSAGE_ROLES.has(item.role)) {
      throw invalidBody(`${param}.role must be one of user, system, developer or assistant.`, `${param}.role`);
    }
    const content = typeof item.content === 'string' ? [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }] : item.content;
    if (!Array.isArray(content)) throw invalidBody(`${param}.content must be a string or an array of content parts.`, `${param}.content`);
    return { id: typeof item.id === 'string' ? item.id : newResponsesId('msg'), type: 'message', role: item.role, content };
  });
}

/** Appends the chat messages of `items`; consecutive function calls become one assistant message's tool calls. */
function appendItems(messages: JsonObject[], items: readonly JsonObject[], prefix: string, dropped: string[]): void {
  for (const [index, item] of items.entries()) {
    const param = `${prefix}[${index}]`;
    switch (item.type) {
      case 'message':
        messages.push(messageOf(item, param));
        break;
      case 'function_call':
        appendToolCall(messages, toolCallOf(item, param));
        break;
      case 'function_call_output':
        messages.push(toolResultOf(item, param));
        break;
      case 'reasoning':
        // A reasoning item is an OpenAI model's own state; other models have nothing to read in it.
        if (!dropped.includes('reasoning items')) dropped.push('reasoning items');
        break;
      default:
        throw invalidBody(
          `${param}.type "${String(item.type)}" is not supported for this model; send message, function_call or function_call_output items.`,
          `${param}.type`,
        );
    }
  }
}

/**
 * The user messages of a conversation as chat messages, for the input policy (image URLs,
 * data URIs, files, modalities) when the items go to a provider untranslated: its text,
 * image and file parts; other items and parts are left to the provider. An image or file
 * by reference (`file_id`, `file_url`) is refused here as for every provider: an id would
 * name a file of the gateway's own account, a URL would have the provider fetch it.
 */
export function policyMessagesOf(conversation: ResponsesConversation): JsonObject[] {
  return [...userMessagesOf(conversation.history, 'previous_response_id'), ...userMessagesOf(conversation.input, 'input')];
}

const JUDGED_PARTS = new Set(['input_text', 'input_image', 'input_file']);

function userMessagesOf(items: readonly JsonObject[], prefix: string): JsonObject[] {
  return items.flatMap((item, index) => {
    if (item.type !== 'message' || item.role !== 'user' || !Array.isArray(item.content)) return [];
    const content = item.content.flatMap((part: unknown, partIndex) =>
      isRecord(part) && typeof part.type === 'string' && JUDGED_PARTS.has(part.type) ? [userPart(part, `${prefix}[${index}].content[${partIndex}]`)] : [],
    );
    return [{ role: 'user', content }];
  });
}

function messageOf(item: JsonObject, param: string): JsonObject {
  const role = item.role as string;
  const parts = item.content as unknown[];
  if (role === 'assistant') return { role, content: assistantText(parts, param) };
  if (role === 'system' || role === 'developer') return { role, content: textParts(parts, param) };
  return { role, content: parts.map((part, index) => userPart(part, `${param}.content[${index}]`)) };
}

function assistantText(parts: unknown[], param: string): string {
  return parts
    .map((part, index) => {
      if (isRecord(part) && (part.type === 'output_text' || part.type === 'input_text') && typeof part.text === 'string') return part.text;
      if (isRecord(part) && part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
      throw invalidBody(`${param}.content[${index}] must be an output_text part: an assistant message holds only text.`, `${param}.content[${index}]`);
    })
    .join('');
}

function textParts(parts: unknown[], param: string): string {
  return parts
    .map((part, index) => {
      if (isRecord(part) && part.type === 'input_text' && typeof part.text === 'string') return part.text;
      throw invalidBody(`${param}.content[${index}] must be an input_text part: this role accepts only text.`, `${param}.content[${index}]`);
    })
    .join('');
}

/** A user message part as the chat format's: text, an image URL (https or data URI), a file as a data URI. */
function userPart(part: unknown, param: string): JsonObject {
  if (!isRecord(part)) throw invalidBody(`${param} must be a content part object with a type.`, param);
  switch (part.type) {
    case 'input_text':
      if (typeof part.text !== 'string') throw invalidBody(`${param}.text must be a string.`, `${param}.text`);
      return { type: 'text', text: part.text };
    case 'input_image':
      if (typeof part.image_url !== 'string') {
        throw invalidBody(`${param}.image_url must be an https URL or a base64 data URI; file_id references are not supported here.`, `${param}.image_url`);
      }
      return { type: 'image_url', image_url: { url: part.image_url, ...(typeof part.detail === 'string' ? { detail: part.detail } : {}) } };
    case 'input_file':
      if (typeof part.file_data !== 'string') {
        throw invalidBody(`${param}.file_data must be a base64 data URI (data:application/pdf;base64,…); file_id and file_url are not supported here.`, `${param}.file_data`);
      }
      return { type: 'file', file: { file_data: part.file_data, ...(typeof part.filename === 'string' ? { filename: part.filename } : {}) } };
    default:
      throw invalidBody(`${param}.type must be input_text, input_image or input_file.`, `${param}.type`);
  }
}

function toolCallOf(item: JsonObject, param: string): JsonObject {
  for (const field of ['call_id', 'name', 'arguments']) {
    if (typeof item[field] !== 'string') throw invalidBody(`${param}.${field} must be a string.`, `${param}.${field}`);
  }
  return { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
}

/** Adds a tool call to the assistant message just before it, or to a new one. */
function appendToolCall(messages: JsonObject[], call: JsonObject): void {
  const last = messages.at(-1);
  if (last !== undefined && last.role === 'assistant') {
    last.tool_calls = [...((last.tool_calls as JsonObject[] | undefined) ?? []), call];
    return;
  }
  messages.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function toolResultOf(item: JsonObject, param: string): JsonObject {
  if (typeof item.call_id !== 'string') throw invalidBody(`${param}.call_id must name the function call it answers.`, `${param}.call_id`);
  const output = item.output;
  if (typeof output === 'string') return { role: 'tool', tool_call_id: item.call_id, content: output };
  if (Array.isArray(output)) return { role: 'tool', tool_call_id: item.call_id, content: textParts(output, `${param}.output`) };
  throw invalidBody(`${param}.output must be a string or an array of input_text parts.`, `${param}.output`);
}

/** The translated top-level fields, in the chat format's words. */
function chatFields(body: JsonObject): JsonObject {
  const chat: JsonObject = {};
  if (body.tools !== undefined && body.tools !== null) chat.tools = toolsOf(body.tools);
  if (body.tool_choice !== undefined && body.tool_choice !== null) chat.tool_choice = toolChoiceOf(body.tool_choice);
  if (body.max_output_tokens !== undefined && body.max_output_tokens !== null) chat.max_completion_tokens = body.max_output_tokens;
  for (const field of ['temperature', 'top_p', 'parallel_tool_calls', 'user'] as const) {
    if (body[field] !== undefined && body[field] !== null) chat[field] = body[field];
  }
  const format = isRecord(body.text) ? body.text.format : undefined;
  if (format !== undefined && format !== null) {
    const responseFormat = responseFormatOf(format);
    if (responseFormat !== null) chat.response_format = responseFormat;
  }
  return chat;
}

function toolsOf(tools: unknown): JsonObject[] {
  if (!Array.isArray(tools)) throw invalidBody('tools must be an array.', 'tools');
  return tools.map((tool: unknown, index) => {
    const param = `tools[${index}]`;
    if (!isRecord(tool) || tool.type !== 'function') {
      const type = isRecord(tool) ? String(tool.type) : typeof tool;
      throw invalidBody(`${param}.type "${type}" is not supported for this model: only function tools are; built-in tools need an OpenAI model.`, `${param}.type`);
    }
    if (typeof tool.name !== 'string' || tool.name.length === 0) throw invalidBody(`${param}.name must be a non-empty string.`, `${param}.name`);
    const fn: JsonObject = { name: tool.name };
    if (typeof tool.description === 'string') fn.description = tool.description;
    if (tool.parameters !== undefined && tool.parameters !== null) fn.parameters = tool.parameters;
    if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
    return { type: 'function', function: fn };
  });
}

function toolChoiceOf(choice: unknown): unknown {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (isRecord(choice) && choice.type === 'function' && typeof choice.name === 'string') return { type: 'function', function: { name: choice.name } };
  throw invalidBody('tool_choice must be "auto", "none", "required" or {"type": "function", "name": "…"} for this model.', 'tool_choice');
}

function responseFormatOf(format: unknown): JsonObject | null {
  if (!isRecord(format)) throw invalidBody('text.format must be an object.', 'text.format');
  if (format.type === 'text') return null;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    if (typeof format.name !== 'string' || !isRecord(format.schema)) {
      throw invalidBody('text.format of type json_schema needs a name and a schema object.', 'text.format');
    }
    const schema: JsonObject = { name: format.name, schema: format.schema };
    if (typeof format.description === 'string') schema.description = format.description;
    if (typeof format.strict === 'boolean') schema.strict = format.strict;
    return { type: 'json_schema', json_schema: schema };
  }
  throw invalidBody('text.format.type must be text, json_object or json_schema.', 'text.format.type');
}
