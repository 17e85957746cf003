import { GatewayError } from '../../errors/index.js';

/*
 * Gemini's finishReason in OpenAI's terms (stop, length, tool_calls, content_filter). OpenAI
 * has no finish reason for "the model failed": a candidate that ended without a usable answer
 * is an error, so an app never takes an empty answer for a normal one. The table is in
 * docs/providers-gemini.md.
 */

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** What the candidate holds when its finishReason arrives (for a stream: everything sent so far). */
export interface CandidateAnswer {
  calledTools: boolean;
  hasContent: boolean;
}

/** Stopped by a filter of Google's (safety, blocklist, recitation, PII, language, images): OpenAI's content_filter. */
const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'LANGUAGE',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/**
 * The model failed to produce a usable answer: whatever text came before is narration, not
 * the answer. A 502, which the OpenAI SDKs retry by themselves, since a retry usually works.
 */
const MODEL_FAILURES = new Map([
  ['MALFORMED_FUNCTION_CALL', 'The model produced a malformed tool call, so there is no answer. Retry the request.'],
  [
    'UNEXPECTED_TOOL_CALL',
    'The model tried to call a tool the request does not offer, so there is no answer. Retry the request, or offer the tool in tools (and leave tool_choice "none" out).',
  ],
  ['TOO_MANY_TOOL_CALLS', 'The model made too many tool calls in a row and was stopped before answering. Retry the request.'],
  ['MALFORMED_RESPONSE', 'The model produced a malformed response. Retry the request.'],
]);

/**
 * OpenAI finish_reason of a Gemini finishReason, or null while the candidate is still going
 * (no finishReason yet). Throws the GatewayError of a candidate that ended without an answer.
 */
export function finishReasonOf(reason: string | undefined, answer: CandidateAnswer, provider: string): FinishReason | null {
  if (reason === undefined) return null;
  const logDetail = { provider, reason: 'candidate ended without an answer', finishReason: reason };
  if (reason === 'STOP') return answer.calledTools ? 'tool_calls' : 'stop';
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  const failure = MODEL_FAILURES.get(reason);
  if (failure !== undefined) throw new GatewayError('provider_error', failure, { logDetail });
  if (reason === 'MISSING_THOUGHT_SIGNATURE') {
    throw new GatewayError(
      'invalid_body',
      'An assistant message with tool_calls lacks the thought signature this model needs back. Send assistant messages back exactly as you received them, with tool_calls[].extra_content.google.thought_signature.',
      { param: 'messages', logDetail },
    );
  }
  // OTHER, FINISH_REASON_UNSPECIFIED, NO_IMAGE, IMAGE_OTHER and values Google adds later: the
  // answer so far stands as a normal end; without one there is nothing to return.
  if (answer.hasContent || answer.calledTools) return answer.calledTools ? 'tool_calls' : 'stop';
  throw new GatewayError('provider_error', 'The model stopped without an answer. Retry the request.', { logDetail });
}
