import { isRecord } from '../shared/message-content.js';
import type { JsonObject } from '../../model-api/index.js';

/*
 * The gateway takes file parts as `{type: "file" | "input_file", file: {filename, mime_type,
 * file_data}}` (and a flat Responses-style `input_file`), with `file_data` a data URI or bare
 * base64 typed by `mime_type`. OpenAI's Chat Completions takes only `{type: "file", file:
 * {filename, file_data}}` with a data URI, and answers 400 to the part type `input_file`.
 * Such parts are rewritten; a body without them goes on as sent.
 */

function needsRewrite(part: unknown): boolean {
  if (!isRecord(part)) return false;
  return part.type === 'input_file' || (part.type === 'file' && isRecord(part.file) && part.file.mime_type !== undefined);
}

function hasGatewayFilePart(message: unknown): boolean {
  return isRecord(message) && Array.isArray(message.content) && message.content.some(needsRewrite);
}

/** One file part as OpenAI's (the route's content validation already checked it). */
function openAIFilePart(part: Record<string, unknown>): JsonObject {
  const { mime_type: mimeType, ...file } = isRecord(part.file) ? part.file : { filename: part.filename, mime_type: part.mime_type, file_data: part.file_data };
  const data = String(file.file_data);
  const fileData = data.startsWith('data:') ? data : `data:${String(mimeType)};base64,${data}`;
  return { type: 'file', file: { ...(file.filename !== undefined ? { filename: file.filename } : {}), file_data: fileData } };
}

function rewriteMessage(message: unknown): unknown {
  if (!hasGatewayFilePart(message)) return message;
  const { content } = message as { content: unknown[] };
  return { ...(message as JsonObject), content: content.map((part) => (needsRewrite(part) ? openAIFilePart(part as Record<string, unknown>) : part)) };
}

/** `{messages}` with the file parts OpenAI cannot take rewritten, or nothing when there are none. */
export function openAIFileParts(body: JsonObject): { messages?: unknown[] } {
  const { messages } = body;
  if (!Array.isArray(messages) || !messages.some(hasGatewayFilePart)) return {};
  return { messages: messages.map(rewriteMessage) };
}
