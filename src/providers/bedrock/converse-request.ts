import { invalidBody } from '../../errors/index.js';
import type { JsonObject } from '../../model-api/index.js';
import { parseBase64DataUri } from '../shared/data-uri.js';
import { isRecord, mapUserContent, textOf, type ContentPart } from '../shared/message-content.js';

/*
 * An OpenAI chat-completions body as a Bedrock Converse request (Amazon Bedrock API Reference,
 * "Converse"): the model id goes in the path, everything else in the body.
 */

type ContentBlock = Record<string, unknown>;
interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

/** Chat fields Converse has no equivalent for, left out and named in the log (as the vendor SDKs treat them). */
const HINT_FIELDS = ['seed', 'frequency_penalty', 'presence_penalty', 'logit_bias', 'store', 'metadata', 'user', 'service_tier'] as const;

export function hintsDroppedOf(body: JsonObject): string[] {
  return HINT_FIELDS.filter((field) => body[field] !== undefined && body[field] !== null);
}

const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};

/** Converse's document `name`: letters, digits, single spaces, hyphens, parentheses and brackets. */
function documentName(filename: unknown, index: number): string {
  const base = typeof filename === 'string' ? filename.replace(/\.[^.]*$/, '') : '';
  const cleaned = base.replace(/[^A-Za-z0-9 ()[\]-]/g, ' ').replace(/\s+/g, ' ').trim();
  return cleaned.length > 0 ? cleaned.slice(0, 200) : `document ${index + 1}`;
}

function userPart(part: ContentPart, param: string, documents: { count: number }): ContentBlock[] {
  if (part.type === 'image_url') {
    const url = isRecord(part.image_url) ? part.image_url.url : undefined;
    const data = typeof url === 'string' ? parseBase64DataUri(url) : null;
    // The input policy refused remote URLs already (the provider takes none).
    if (data === null) throw invalidBody(`${param}.image_url.url must be a base64 data URI for this model.`, `${param}.image_url.url`);
    const format = IMAGE_FORMATS[data.mimeType];
    if (format === undefined) throw invalidBody(`${param}: this model takes PNG, JPEG, GIF or WebP images, not ${data.mimeType}.`, `${param}.image_url.url`);
    return [{ image: { format, source: { bytes: data.base64 } } }];
  }
  if (part.type === 'file' || part.type === 'input_file') {
    const file = isRecord(part.file) ? part.file : part;
    const raw = typeof file.file_data === 'string' ? file.file_data : '';
    const data = parseBase64DataUri(raw) ?? (typeof file.mime_type === 'string' ? { mimeType: file.mime_type.toLowerCase(), base64: raw } : null);
    if (data === null || data.base64.length === 0) throw invalidBody(`${param}.file.file_data must be base64 data with its media type.`, `${param}.file.file_data`);
    const format = DOCUMENT_FORMATS[data.mimeType];
    if (format === undefined) throw invalidBody(`${param}: this model takes PDF, CSV, Word, Excel, HTML, text or Markdown documents, not ${data.mimeType}.`, `${param}.file`);
    const block = { document: { format, name: documentName(file.filename, documents.count), source: { bytes: data.base64 } } };
    documents.count += 1;
    return [block];
  }
  throw invalidBody(`${param}: content parts of type "${part.type}" are not supported by this model.`, `${param}.type`);
}

function toolArguments(value: unknown, param: string): unknown {
  if (typeof value !== 'string' || value.length === 0) return {};
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw invalidBody(`${param} must be a JSON object text.`, param);
  }
}

/** Appends blocks to the last message when it has the same role (Converse wants the roles to alternate). */
function push(messages: ConverseMessage[], role: ConverseMessage['role'], content: ContentBlock[]): void {
  if (content.length === 0) return;
  const last = messages.at(-1);
  if (last !== undefined && last.role === role) last.content.push(...content);
  else messages.push({ role, content });
}

function toConverseMessages(input: unknown): { system: ContentBlock[]; messages: ConverseMessage[] } {
  if (!Array.isArray(input)) throw invalidBody('messages must be an array.', 'messages');
  const system: ContentBlock[] = [];
  const messages: ConverseMessage[] = [];
  const documents = { count: 0 };
  input.forEach((message: unknown, index) => {
    const param = `messages[${index}]`;
    if (!isRecord(message)) throw invalidBody(`${param} must be an object.`, param);
    const content = message.content;
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(content, `${param}.content`);
        if (text.length > 0) system.push({ text });
        return;
      }
      case 'user':
        return push(messages, 'user', mapUserContent(content, `${param}.content`, (text) => (text.length > 0 ? [{ text }] : []), (part, partParam) => userPart(part, partParam, documents)));
      case 'assistant': {
        const text = textOf(content, `${param}.content`);
        const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
        const blocks: ContentBlock[] = [
          ...(text.length > 0 ? [{ text }] : []),
          ...calls.map((call: unknown, callIndex) => {
            const at = `${param}.tool_calls[${callIndex}]`;
            const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
            if (!isRecord(call) || typeof call.id !== 'string' || fn === undefined || typeof fn.name !== 'string') throw invalidBody(`${at} must have an id and a function name.`, at);
            return { toolUse: { toolUseId: call.id, name: fn.name, input: toolArguments(fn.arguments, `${at}.function.arguments`) } };
          }),
        ];
        return push(messages, 'assistant', blocks);
      }
      case 'tool': {
        if (typeof message.tool_call_id !== 'string') throw invalidBody(`${param}.tool_call_id must be the id of the tool call it answers.`, `${param}.tool_call_id`);
        return push(messages, 'user', [{ toolResult: { toolUseId: message.tool_call_id, content: [{ text: textOf(content, `${param}.content`) }] } }]);
      }
      default:
        throw invalidBody(`${param}.role must be system, developer, user, assistant or tool.`, `${param}.role`);
    }
  });
  return { system, messages };
}

function toolConfigOf(body: JsonObject): JsonObject | undefined {
  if (!Array.isArray(body.tools) || body.tools.length === 0 || body.tool_choice === 'none') return undefined;
  const tools = body.tools.map((tool: unknown, index) => {
    const fn = isRecord(tool) && tool.type === 'function' && isRecord(tool.function) ? tool.function : undefined;
    if (fn === undefined || typeof fn.name !== 'string') throw invalidBody(`tools[${index}] must be a function tool with a name.`, `tools[${index}]`);
    return {
      toolSpec: {
        name: fn.name,
        ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
        inputSchema: { json: isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } },
      },
    };
  });
  const choice = body.tool_choice;
  const toolChoice =
    choice === 'required'
      ? { any: {} }
      : isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string'
        ? { tool: { name: choice.function.name } }
        : choice === undefined || choice === null || choice === 'auto'
          ? undefined
          : (() => {
              throw invalidBody('tool_choice must be "none", "auto", "required" or a named function.', 'tool_choice');
            })();
  return { tools, ...(toolChoice === undefined ? {} : { toolChoice }) };
}

function stopSequencesOf(stop: unknown): string[] | undefined {
  if (stop === undefined || stop === null) return undefined;
  const sequences = typeof stop === 'string' ? [stop] : stop;
  if (!Array.isArray(sequences) || !sequences.every((item): item is string => typeof item === 'string')) throw invalidBody('stop must be a string or an array of strings.', 'stop');
  return sequences;
}

/**
 * `response_format` as Converse's structured output (`outputConfig.textFormat`, whose schema is a
 * JSON text). JSON mode has no schema of its own there: it asks for any JSON object.
 */
function outputConfigOf(format: unknown): JsonObject | undefined {
  if (format === undefined || format === null) return undefined;
  if (!isRecord(format)) throw invalidBody('response_format must be an object.', 'response_format');
  switch (format.type) {
    case 'text':
      return undefined;
    case 'json_object':
      return { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify({ type: 'object' }), name: 'json_object' } } } };
    case 'json_schema': {
      const spec = format.json_schema;
      if (!isRecord(spec) || !isRecord(spec.schema)) throw invalidBody('response_format.json_schema.schema must be a JSON schema object.', 'response_format.json_schema.schema');
      const jsonSchema = {
        schema: JSON.stringify(spec.schema),
        ...(typeof spec.name === 'string' ? { name: spec.name } : {}),
        ...(typeof spec.description === 'string' ? { description: spec.description } : {}),
      };
      return { textFormat: { type: 'json_schema', structure: { jsonSchema } } };
    }
    default:
      throw invalidBody('response_format.type must be "text", "json_object" or "json_schema".', 'response_format.type');
  }
}

/** The Converse request body of a chat call. */
export function toConverseRequest(body: JsonObject): JsonObject {
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw invalidBody('This model returns one choice per request; send n: 1 or leave n out.', 'n');
  if (body.logprobs === true) throw invalidBody('This model does not return log probabilities; leave logprobs out.', 'logprobs');
  const { system, messages } = toConverseMessages(body.messages);
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  const stopSequences = stopSequencesOf(body.stop);
  const inferenceConfig = {
    ...(typeof maxTokens === 'number' ? { maxTokens } : {}),
    ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
    ...(typeof body.top_p === 'number' ? { topP: body.top_p } : {}),
    ...(stopSequences === undefined ? {} : { stopSequences }),
  };
  const toolConfig = toolConfigOf(body);
  const outputConfig = outputConfigOf(body.response_format);
  return {
    messages,
    ...(system.length > 0 ? { system } : {}),
    ...(Object.keys(inferenceConfig).length > 0 ? { inferenceConfig } : {}),
    ...(toolConfig === undefined ? {} : { toolConfig }),
    ...(outputConfig === undefined ? {} : { outputConfig }),
    // top_k has no field of Converse's own: the model's request fields take it (Claude, Llama, Mistral on Bedrock).
    ...(typeof body.top_k === 'number' ? { additionalModelRequestFields: { top_k: body.top_k } } : {}),
  };
}
