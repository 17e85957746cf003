import type { JsonObject } from '../../model-api/index.js';
import type { GeminiBody } from './request.js';

/** Tokens counted for each inline image, document or sound: about what the vendors count for an image of a megapixel. */
export const MEDIA_PART_TOKENS = 1_600;

/**
 * An estimate of a Gemini API request's input tokens, for providers that cannot count them:
 * one token per four characters of its text (system instruction, text parts, function calls
 * and responses, the tools' declarations), and MEDIA_PART_TOKENS per inline part. Base64
 * data is not text and is not counted as such.
 */
export function estimateGeminiTokens(body: GeminiBody): number {
  let characters = 0;
  let media = 0;
  const walk = (value: unknown): void => {
    if (typeof value === 'string') characters += value.length;
    else if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      const part = value as JsonObject;
      if (part.inlineData !== undefined) {
        media += 1;
        return;
      }
      for (const [key, member] of Object.entries(part)) if (key !== 'role' && key !== 'thoughtSignature') walk(member);
    }
  };
  walk(body.systemInstruction);
  walk(body.contents);
  if (Array.isArray(body.tools)) characters += JSON.stringify(body.tools).length;
  return Math.ceil(characters / 4) + media * MEDIA_PART_TOKENS;
}
