import { createHash } from 'node:crypto';
import type { CachePolicy } from './policy.js';

/**
 * Members of a request body that change who asked or how the answer is kept, not what the
 * model answers: left out of the key, so the same question from two end users of a project
 * is one entry.
 */
const NOT_OF_THE_ANSWER = new Set(['user', 'metadata', 'safety_identifier', 'prompt_cache_key', 'store', 'stream', 'service_tier']);

/** Appends `value` as JSON with object members in code-unit order (functions and undefined left out, as JSON.stringify does). */
function canonical(value: unknown, out: string[]): void {
  if (value === null || typeof value !== 'object') {
    out.push(JSON.stringify(value) ?? 'null');
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    value.forEach((item, index) => {
      if (index > 0) out.push(',');
      canonical(typeof item === 'function' || item === undefined ? null : item, out);
    });
    out.push(']');
    return;
  }
  if (value instanceof Uint8Array) {
    out.push(JSON.stringify(Buffer.from(value).toString('base64')));
    return;
  }
  const members = value as Record<string, unknown>;
  const names = Object.keys(members)
    .filter((name) => members[name] !== undefined && typeof members[name] !== 'function')
    .sort();
  out.push('{');
  names.forEach((name, index) => {
    if (index > 0) out.push(',');
    out.push(JSON.stringify(name), ':');
    canonical(members[name], out);
  });
  out.push('}');
}

/** What a cached answer is the answer to: the surface, the model after alias resolution and the request as the provider gets it. */
export interface KeyParts {
  /** The public API and the way it was answered (`chat-completions`, `messages:native`, `embeddings`, …). */
  surface: string;
  /** The catalog id the requested model resolved to. */
  model: string;
  stream: boolean;
  /** The request body (the caller's key is never part of it). */
  body: unknown;
  /**
   * The names of the guardrails the call runs under, when any: an answer is shared only by
   * calls under the same ones, which checked it (and the request) when it was first made.
   */
  guardrails?: string;
}

/** The key of a request within its namespace: a SHA-256 of the normalised request, hex. */
export function cacheKeyOf(parts: KeyParts): string {
  const body = parts.body;
  let kept: unknown = body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const members = body as Record<string, unknown>;
    kept = Object.fromEntries(Object.keys(members).filter((name) => !NOT_OF_THE_ANSWER.has(name)).map((name) => [name, members[name]]));
  }
  const out: string[] = [];
  canonical({ v: 1, surface: parts.surface, model: parts.model, stream: parts.stream, body: kept, ...(parts.guardrails === undefined ? {} : { guardrails: parts.guardrails }) }, out);
  return createHash('sha256').update(out.join('')).digest('hex');
}

/** Deepest a body is searched for tool results (a real conversation is a few levels deep). */
const MAX_SEARCH_DEPTH = 8;

/** Whether a body carries a tool's result: a `tool` message (chat), a `tool_result` block (Messages), a `function_call_output` item (Responses). */
export function carriesToolResults(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object' || depth > MAX_SEARCH_DEPTH) return false;
  if (Array.isArray(value)) return value.some((item) => carriesToolResults(item, depth + 1));
  const members = value as Record<string, unknown>;
  if (members.role === 'tool' || members.role === 'function') return true;
  if (members.type === 'tool_result' || members.type === 'function_call_output' || members.type === 'custom_tool_call_output') return true;
  for (const name of ['messages', 'input', 'content']) if (carriesToolResults(members[name], depth + 1)) return true;
  return false;
}

/** What a request is, as a policy's eligibility rules read it. */
export interface RequestTraits {
  /** The request's temperature; undefined when it set none (the vendor's default, not 0). Embeddings: null (always deterministic). */
  temperature: number | null | undefined;
  /** The caller said `store: false`. */
  storeFalse: boolean;
  /** Images, audio or files among the input. */
  media: boolean;
  toolResults: boolean;
}

/** Why a request the policy applies to is answered without the cache, or null when it may be cached. */
export function ineligibility(policy: CachePolicy, traits: RequestTraits): string | null {
  if (traits.temperature !== null && policy.onlyDeterministic && traits.temperature !== 0) return 'not_deterministic';
  if (traits.storeFalse && !policy.storeFalse) return 'store_false';
  if (traits.media && !policy.media) return 'media';
  if (traits.toolResults && !policy.toolResults) return 'tool_results';
  return null;
}
