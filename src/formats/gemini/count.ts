import { estimateRequestTokens } from '../estimate.js';
import type { GeminiBody } from './request.js';

const NOT_TEXT = new Set(['role', 'thoughtSignature']);

/**
 * An estimate of a Gemini API request's input tokens, for providers that cannot count them:
 * one token per four characters of its text (system instruction, text parts, function calls
 * and responses, the tools' declarations), and MEDIA_TOKENS per inline part. Base64 data is
 * not text and is not counted as such.
 */
export function estimateGeminiTokens(body: GeminiBody): number {
  return estimateRequestTokens([body.systemInstruction, body.contents], body.tools, (part) => part.inlineData !== undefined, NOT_TEXT);
}
