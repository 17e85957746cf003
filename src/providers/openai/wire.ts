import { isRecord } from '../shared/message-content.js';
import { tokenCount } from '../shared/token-count.js';
import type { JsonObject, TokenUsage } from '../../model-api/index.js';

/**
 * The OpenAI wire format as far as the adapter reads it. Lenient on purpose: compatible
 * servers (Ollama, vLLM, llama.cpp, Groq…) add fields, omit optional ones, and sometimes
 * name usage fields the way the newer OpenAI endpoints do (input/output tokens).
 */

/** `{"error": {"message", "type", "param", "code"}}`; some servers send a bare string. */
export interface WireErrorBody {
  error?: { message?: unknown; type?: unknown; code?: unknown; param?: unknown } | string | null;
  message?: unknown;
  detail?: unknown;
}

interface WireUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  input_tokens?: unknown;
  output_tokens?: unknown;
  total_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
  input_tokens_details?: { cached_tokens?: unknown } | null;
}

/**
 * Usage of any OpenAI response (chat, embeddings, images, transcriptions). Returns null when
 * the provider reported none, so "not reported" stays distinct from zero.
 */
export function usageFromWire(value: unknown): TokenUsage | null {
  if (typeof value !== 'object' || value === null) return null;
  const usage = value as WireUsage;
  const prompt = tokenCount(usage.prompt_tokens) ?? tokenCount(usage.input_tokens);
  const completion = tokenCount(usage.completion_tokens) ?? tokenCount(usage.output_tokens);
  const total = tokenCount(usage.total_tokens);
  if (prompt === null && completion === null && total === null) return null;
  const details = usage.prompt_tokens_details ?? usage.input_tokens_details;
  return {
    promptTokens: prompt ?? (total !== null ? Math.max(0, total - (completion ?? 0)) : 0),
    completionTokens: completion ?? 0,
    totalTokens: total ?? (prompt ?? 0) + (completion ?? 0),
    cachedPromptTokens: tokenCount(details?.cached_tokens),
  };
}

/** The provider's own error message from an error body, or null when there is none. */
export function errorMessageOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const { error, message, detail } = body as WireErrorBody;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null && typeof error.message === 'string') return error.message;
  if (typeof message === 'string') return message;
  if (typeof detail === 'string') return detail;
  return null;
}

/** `error.param` of an error body: the request field at fault, or null. */
export function errorParamOf(body: unknown): string | null {
  const error = (body as WireErrorBody | null)?.error;
  return typeof error === 'object' && error !== null && typeof error.param === 'string' ? error.param : null;
}

/** `error.type` / `error.code` of an error body, kept for the log. */
export function errorKindOf(body: unknown): { upstreamType?: string; upstreamCode?: string } {
  const error = (body as WireErrorBody | null)?.error;
  if (typeof error !== 'object' || error === null) return {};
  const type: unknown = error.type;
  const code: unknown = error.code;
  return { ...(typeof type === 'string' ? { upstreamType: type } : {}), ...(typeof code === 'string' ? { upstreamCode: code } : {}) };
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Whether a value is a list of JSON objects (`choices`, `data`: what every client reads). */
export function isObjectList(value: unknown): value is JsonObject[] {
  return Array.isArray(value) && value.every(isRecord);
}

/** The JSON object `text` holds; undefined when it is not JSON, or JSON of another kind. */
export function parseJsonObject(text: string): JsonObject | undefined {
  const value = parseJson(text);
  return isRecord(value) ? value : undefined;
}

/** The JSON object `text` holds when its `list` member is a list of objects; undefined otherwise. */
export function parseJsonObjectWithList(text: string, list: string): JsonObject | undefined {
  const value = parseJsonObject(text);
  return value !== undefined && isObjectList(value[list]) ? value : undefined;
}
