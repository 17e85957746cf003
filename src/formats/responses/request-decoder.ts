import { invalidBody, unsupportedField } from '../../errors/index.js';
import type { CallExtensions, JsonObject, ReasoningEffort, ReasoningRequest } from '../../model-api/index.js';
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
  /** The caller's fields the translation leaves out (they only tune OpenAI's own service), as paths. */
  dropped: string[];
  extensions: CallExtensions | undefined;
  /** The caller's tools by the function name the chat call gives them (namespace and custom tools renamed or reshaped). */
  tools: ToolNames;
  /** The `mcp` tools naming servers of the gateway: the gateway runs their tool loop (docs/mcp.md). */
  mcp: McpToolRequest[];
}

/** Whether a body's tools name a server of the gateway (an `mcp` tool without `server_url` or `connector_id`). */
export function namesGatewayMcpServer(body: JsonObject): boolean {
  return Array.isArray(body.tools) && body.tools.some((tool: unknown) => isRecord(tool) && isGatewayMcpTool(tool));
}

function isGatewayMcpTool(tool: JsonObject): boolean {
  return tool.type === 'mcp' && tool.server_url === undefined && tool.connector_id === undefined;
}

/** An `mcp` tool without `server_url` or `connector_id`: a server of the gateway, by its name. */
export interface McpToolRequest {
  /** Where the tool is in the body (`tools[2]`). */
  param: string;
  serverLabel: string;
  /** The tools of the server it may use, by their names on the server; null: all of them. */
  allowedTools: string[] | null;
}

/** How a chat function name maps back to the caller's tool: a namespace's function, or a custom (freeform) tool. */
export interface CallerTool {
  name: string;
  namespace?: string;
  custom?: boolean;
}

/** Chat function names that are not the caller's own tool name, or stand for a custom tool. */
export type ToolNames = ReadonlyMap<string, CallerTool>;

/** Members of the body the gateway itself reads (not translated): the route's and the store's. */
const GATEWAY_FIELDS = new Set(['model', 'provider', 'stream', 'store', 'previous_response_id', 'metadata', 'input', 'instructions', 'background']);

/** Fields translated into the chat request: each has a case in `chatFields`. */
const TRANSLATED_FIELDS = new Set(['tools', 'tool_choice', 'max_output_tokens', 'temperature', 'top_p', 'text', 'parallel_tool_calls', 'user', 'reasoning']);

/**
 * Fields whose meaning lives in the caller's OpenAI account (a stored prompt, a conversation):
 * without them the answer would be another one, so a translated call refuses them.
 */
const ACCOUNT_FIELDS: Record<string, string> = {
  prompt: 'a prompt stored in an OpenAI account',
  conversation: 'a conversation stored in an OpenAI account',
};

/** Built-in tools only OpenAI runs (decisions §9 rule 3): refused for other models. */
const OPENAI_ONLY_TOOLS: Record<string, string> = {
  file_search: 'file search',
  code_interpreter: 'the code interpreter',
  computer_use_preview: 'computer use',
  computer: 'computer use',
  mcp: 'a remote MCP tool (server_url or connector_id; a server of this gateway is named by server_label alone)',
  image_generation: 'image generation',
  local_shell: 'the local shell tool',
  shell: 'the shell tool',
  apply_patch: 'the apply_patch tool',
};

const WEB_SEARCH_TOOL = /^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$/;

const EFFORTS = new Set<ReasoningEffort>(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

/** Joins a namespace and its function's name into the one function name the chat call has. */
const NAMESPACE_SEPARATOR = '__';

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

/**
 * Decodes a body whose conversation (stored history and own input) was read already. Fields
 * that only tune OpenAI's service (`include`, `prompt_cache_key`, `client_metadata`,
 * `service_tier`, …, and any field the gateway does not know) are dropped and named; those whose
 * meaning is held in an OpenAI account are refused.
 */
export function decodeResponsesRequest(body: JsonObject, conversation: ResponsesConversation): DecodedResponsesRequest {
  const dropped: string[] = [];
  for (const field of Object.keys(body)) {
    if (GATEWAY_FIELDS.has(field) || TRANSLATED_FIELDS.has(field) || body[field] === undefined || body[field] === null) continue;
    const held = ACCOUNT_FIELDS[field];
    if (held !== undefined) throw unsupportedField(`${field}: ${held} has no equivalent for this model. Remove it, or pick an OpenAI model.`, field);
    dropped.push(field);
  }
  const tools = new Map<string, CallerTool>();
  const mcp: McpToolRequest[] = [];
  const extensions: CallExtensions = {};
  const messages: JsonObject[] = [];
  if (body.instructions !== undefined && body.instructions !== null) {
    if (typeof body.instructions !== 'string') throw invalidBody('instructions must be a string.', 'instructions');
    messages.push({ role: 'system', content: body.instructions });
  }
  const items = new ItemReader(messages, dropped);
  items.append(conversation.history, 'previous_response_id');
  items.append(conversation.input, 'input');
  if (messages.length === 0) throw invalidBody('input must hold at least one message.', 'input');
  const chat: JsonObject = { messages, ...chatFields(body, { tools, extensions, dropped, mcp }) };
  const reasoning = reasoningOf(body.reasoning);
  if (reasoning !== null) extensions.reasoning = reasoning;
  return { chat, dropped, extensions: Object.keys(extensions).length > 0 ? extensions : undefined, tools, mcp };
}

/** `reasoning: {effort, summary}` as the reasoning extension; null when it asks for nothing. */
function reasoningOf(value: unknown): ReasoningRequest | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) throw invalidBody('reasoning must be an object: {"effort", "summary"}.', 'reasoning');
  const effort = value.effort ?? null;
  if (effort !== null && !EFFORTS.has(effort as ReasoningEffort)) {
    throw invalidBody('reasoning.effort must be one of "none", "minimal", "low", "medium", "high", "xhigh".', 'reasoning.effort');
  }
  const summary = value.summary ?? value.generate_summary ?? null;
  if (effort === null && summary === null) return null;
  return { param: 'reasoning', effort: effort as ReasoningEffort | null, budgetTokens: null, includeThoughts: summary !== null };
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
    // A role the gateway does not know goes to OpenAI as sent; a translation refuses it (messageOf).
    if (typeof item.role !== 'string' || !MESSAGE_ROLES.has(item.role)) return typeof item.id === 'string' ? item : { id: newResponsesId('msg'), ...item };
    const content = typeof item.content === 'string' ? [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }] : item.content;
    if (!Array.isArray(content)) throw invalidBody(`${param}.content must be a string or an array of content parts.`, `${param}.content`);
    return { id: typeof item.id === 'string' ? item.id : newResponsesId('msg'), type: 'message', role: item.role, content };
  });
}

/**
 * Reads items into chat messages: consecutive function calls become one assistant message's tool
 * calls, a reasoning item the reasoning of the assistant message that follows it (its summary as
 * text, its `encrypted_content` as the signature only its own provider is sent).
 */
class ItemReader {
  /** A reasoning item's text and signature, waiting for the assistant message it belongs to. */
  private reasoning: { text: string; signature?: string } | null = null;

  constructor(
    private readonly messages: JsonObject[],
    private readonly dropped: string[],
  ) {}

  append(items: readonly JsonObject[], prefix: string): void {
    for (const [index, item] of items.entries()) {
      const param = `${prefix}[${index}]`;
      switch (item.type) {
        case 'message':
          this.push(messageOf(item, param));
          break;
        case 'function_call':
          this.toolCall(toolCallOf(item, param));
          break;
        case 'custom_tool_call':
          this.toolCall(customToolCallOf(item, param));
          break;
        case 'function_call_output':
        case 'custom_tool_call_output':
          this.push(toolResultOf(item, param));
          break;
        case 'reasoning':
          this.reasoningItem(item);
          break;
        case 'mcp_list_tools':
          // The gateway's own listing of an earlier turn: the tools are listed again for this one.
          break;
        case 'mcp_call':
          this.mcpCall(item, param);
          break;
        case 'web_search_call':
          // A search OpenAI ran: its results reached the model then, and the answer that used them follows.
          this.dropped.push(param);
          break;
        default:
          throw unsupportedField(
            `${param}.type "${String(item.type)}" is not supported for this model; send message, function_call, custom_tool_call, their outputs, or reasoning items.`,
            `${param}.type`,
          );
      }
    }
  }

  /** A tool call the gateway ran in an earlier turn: the model's call of `server__tool`, then its result. */
  private mcpCall(item: JsonObject, param: string): void {
    for (const field of ['id', 'server_label', 'name', 'arguments']) {
      if (typeof item[field] !== 'string') throw invalidBody(`${param}.${field} must be a string.`, `${param}.${field}`);
    }
    const id = String(item.id);
    this.toolCall({ id, type: 'function', function: { name: `${String(item.server_label)}${NAMESPACE_SEPARATOR}${String(item.name)}`, arguments: item.arguments } });
    const result = typeof item.output === 'string' ? item.output : typeof item.error === 'string' ? item.error : '';
    this.push({ role: 'tool', tool_call_id: id, content: result });
  }

  private reasoningItem(item: JsonObject): void {
    const summary = Array.isArray(item.summary) ? item.summary : [];
    const text = summary.map((part: unknown) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('\n\n');
    const signature = typeof item.encrypted_content === 'string' && item.encrypted_content.length > 0 ? item.encrypted_content : undefined;
    this.reasoning = { text, ...(signature !== undefined ? { signature } : {}) };
  }

  private push(message: JsonObject): void {
    if (message.role === 'assistant') this.attachReasoning(message);
    this.messages.push(message);
  }

  /** Adds a tool call to the assistant message just before it, or to a new one. */
  private toolCall(call: JsonObject): void {
    const last = this.messages.at(-1);
    if (last !== undefined && last.role === 'assistant' && this.reasoning === null) {
      last.tool_calls = [...((last.tool_calls as JsonObject[] | undefined) ?? []), call];
      return;
    }
    this.push({ role: 'assistant', content: null, tool_calls: [call] });
  }

  private attachReasoning(message: JsonObject): void {
    if (this.reasoning === null) return;
    if (this.reasoning.text.length > 0) message.reasoning_content = this.reasoning.text;
    if (this.reasoning.signature !== undefined) message.reasoning_signature = this.reasoning.signature;
    this.reasoning = null;
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
  if (!MESSAGE_ROLES.has(role)) throw invalidBody(`${param}.role must be one of user, system, developer or assistant.`, `${param}.role`);
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
  const name = typeof item.namespace === 'string' ? `${item.namespace}${NAMESPACE_SEPARATOR}${String(item.name)}` : item.name;
  return { id: item.call_id, type: 'function', function: { name, arguments: item.arguments } };
}

/** A custom (freeform) tool's call as the function call the chat call made of it: its input as the one argument. */
function customToolCallOf(item: JsonObject, param: string): JsonObject {
  for (const field of ['call_id', 'name', 'input']) {
    if (typeof item[field] !== 'string') throw invalidBody(`${param}.${field} must be a string.`, `${param}.${field}`);
  }
  return { id: item.call_id, type: 'function', function: { name: item.name, arguments: JSON.stringify({ input: item.input }) } };
}

function toolResultOf(item: JsonObject, param: string): JsonObject {
  if (typeof item.call_id !== 'string') throw invalidBody(`${param}.call_id must name the function call it answers.`, `${param}.call_id`);
  const output = item.output;
  if (typeof output === 'string') return { role: 'tool', tool_call_id: item.call_id, content: output };
  if (Array.isArray(output)) return { role: 'tool', tool_call_id: item.call_id, content: textParts(output, `${param}.output`) };
  throw invalidBody(`${param}.output must be a string or an array of input_text parts.`, `${param}.output`);
}

interface ToolTranslation {
  tools: Map<string, CallerTool>;
  extensions: CallExtensions;
  dropped: string[];
  mcp: McpToolRequest[];
}

/** The translated top-level fields, in the chat format's words. */
function chatFields(body: JsonObject, translation: ToolTranslation): JsonObject {
  const chat: JsonObject = {};
  if (body.tools !== undefined && body.tools !== null) {
    const tools = toolsOf(body.tools, translation);
    if (tools.length > 0) chat.tools = tools;
  }
  if (body.tool_choice !== undefined && body.tool_choice !== null) chat.tool_choice = toolChoiceOf(body.tool_choice);
  if (body.max_output_tokens !== undefined && body.max_output_tokens !== null) chat.max_completion_tokens = body.max_output_tokens;
  for (const field of ['temperature', 'top_p', 'parallel_tool_calls', 'user'] as const) {
    if (body[field] !== undefined && body[field] !== null) chat[field] = body[field];
  }
  if (isRecord(body.text)) {
    for (const key of Object.keys(body.text)) if (key !== 'format' && body.text[key] !== undefined && body.text[key] !== null) translation.dropped.push(`text.${key}`);
    const format = body.text.format;
    if (format !== undefined && format !== null) {
      const responseFormat = responseFormatOf(format);
      if (responseFormat !== null) chat.response_format = responseFormat;
    }
  }
  return chat;
}

/**
 * The caller's tools as chat functions: function tools as they are, a namespace's functions
 * flattened to `namespace__name`, a custom (freeform) tool as a function of one string
 * argument `input`, built-in web search as the web search extension; other built-in tools
 * only OpenAI runs are refused.
 */
function toolsOf(tools: unknown, translation: ToolTranslation): JsonObject[] {
  if (!Array.isArray(tools)) throw invalidBody('tools must be an array.', 'tools');
  return tools.flatMap((tool: unknown, index): JsonObject[] => {
    const param = `tools[${index}]`;
    if (!isRecord(tool)) throw invalidBody(`${param} must be a tool object with a type.`, param);
    const type = String(tool.type);
    if (type === 'function') return [functionOf(tool, param)];
    if (type === 'custom') return [customFunctionOf(tool, param, translation.tools)];
    if (type === 'namespace') return namespaceFunctionsOf(tool, param, translation.tools);
    if (WEB_SEARCH_TOOL.test(type)) {
      const filters = isRecord(tool.filters) ? tool.filters : {};
      const allowed = Array.isArray(filters.allowed_domains) && filters.allowed_domains.every((domain) => typeof domain === 'string') ? filters.allowed_domains : null;
      translation.extensions.webSearch = { param, maxUses: null, allowedDomains: allowed, blockedDomains: null };
      for (const key of ['user_location', 'search_context_size', 'external_web_access']) if (tool[key] !== undefined) translation.dropped.push(`${param}.${key}`);
      return [];
    }
    if (isGatewayMcpTool(tool)) {
      translation.mcp.push(gatewayMcpTool(tool, param, translation.dropped));
      return [];
    }
    const what = OPENAI_ONLY_TOOLS[type];
    throw unsupportedField(
      `${param}.type "${type}": ${what ?? 'this built-in tool'} runs only on OpenAI's models, and this model cannot run it. Remove the tool, or pick an OpenAI model.`,
      `${param}.type`,
    );
  });
}

/**
 * An `mcp` tool naming a gateway server: its label and the tools it may use. The gateway runs
 * the tools its allow-lists grant without asking (an approval round is not served); the
 * caller's own credentials for the server have no use (the gateway holds the server's).
 */
function gatewayMcpTool(tool: JsonObject, param: string, dropped: string[]): McpToolRequest {
  if (typeof tool.server_label !== 'string' || tool.server_label.length === 0) {
    throw invalidBody(`${param}.server_label must name an MCP server of this gateway (or give server_url for a remote one, on OpenAI models).`, `${param}.server_label`);
  }
  const approval = tool.require_approval;
  const asksApproval =
    approval === 'always' ||
    (isRecord(approval) && isRecord(approval.always) && ((Array.isArray(approval.always.tool_names) && approval.always.tool_names.length > 0) || approval.always.read_only === true));
  if (asksApproval) {
    throw unsupportedField(
      `${param}.require_approval: the gateway runs the tools its allow-lists grant this key without an approval round. Send "never" (or leave it out).`,
      `${param}.require_approval`,
    );
  }
  if (approval !== undefined && approval !== null && approval !== 'never' && !isRecord(approval)) {
    throw invalidBody(`${param}.require_approval must be "never", "always" or an approval filter object.`, `${param}.require_approval`);
  }
  for (const key of ['headers', 'authorization', 'server_description']) if (tool[key] !== undefined && tool[key] !== null) dropped.push(`${param}.${key}`);
  return { param, serverLabel: tool.server_label, allowedTools: allowedMcpTools(tool.allowed_tools, `${param}.allowed_tools`) };
}

/** `allowed_tools` as tool names: a list, or a filter of `tool_names` (a `read_only` filter needs tool annotations the gateway does not judge). */
function allowedMcpTools(value: unknown, param: string): string[] | null {
  if (value === undefined || value === null) return null;
  const names = isRecord(value) ? value.tool_names : value;
  if (isRecord(value) && value.read_only !== undefined && value.read_only !== null) {
    throw unsupportedField(`${param}.read_only is not served: list the tools by tool_names.`, `${param}.read_only`);
  }
  if (names === undefined && isRecord(value)) return null;
  if (!Array.isArray(names) || !names.every((name) => typeof name === 'string' && name.length > 0)) {
    throw invalidBody(`${param} must be a list of the server's tool names, or {"tool_names": [...]}.`, param);
  }
  return names;
}

function functionOf(tool: JsonObject, param: string, name = tool.name): JsonObject {
  if (typeof name !== 'string' || name.length === 0) throw invalidBody(`${param}.name must be a non-empty string.`, `${param}.name`);
  const fn: JsonObject = { name };
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (tool.parameters !== undefined && tool.parameters !== null) fn.parameters = tool.parameters;
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function namespaceFunctionsOf(tool: JsonObject, param: string, names: Map<string, CallerTool>): JsonObject[] {
  if (typeof tool.name !== 'string' || tool.name.length === 0) throw invalidBody(`${param}.name must be a non-empty string.`, `${param}.name`);
  if (!Array.isArray(tool.tools)) throw invalidBody(`${param}.tools must be an array of function tools.`, `${param}.tools`);
  const namespace = tool.name;
  return tool.tools.map((inner: unknown, index) => {
    const at = `${param}.tools[${index}]`;
    if (!isRecord(inner) || (inner.type !== undefined && inner.type !== 'function')) throw unsupportedField(`${at}: a namespace holds function tools here.`, `${at}.type`);
    if (typeof inner.name !== 'string' || inner.name.length === 0) throw invalidBody(`${at}.name must be a non-empty string.`, `${at}.name`);
    const flat = `${namespace}${NAMESPACE_SEPARATOR}${inner.name}`;
    names.set(flat, { name: inner.name, namespace });
    return functionOf(inner, at, flat);
  });
}

/** A custom tool's freeform input as the one string argument of a function; its grammar, which no other vendor enforces, told in the description. */
function customFunctionOf(tool: JsonObject, param: string, names: Map<string, CallerTool>): JsonObject {
  if (typeof tool.name !== 'string' || tool.name.length === 0) throw invalidBody(`${param}.name must be a non-empty string.`, `${param}.name`);
  const format = isRecord(tool.format) ? tool.format : {};
  const grammar =
    format.type === 'grammar' && typeof format.definition === 'string'
      ? ` The input must follow this ${typeof format.syntax === 'string' ? format.syntax : ''} grammar:\n${format.definition}`
      : '';
  names.set(tool.name, { name: tool.name, custom: true });
  const description = `${typeof tool.description === 'string' ? tool.description : ''}${grammar}`.trim();
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(description.length > 0 ? { description } : {}),
      parameters: { type: 'object', properties: { input: { type: 'string', description: 'The freeform input of the tool.' } }, required: ['input'] },
    },
  };
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
