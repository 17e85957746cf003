import type { JsonObject } from '../model-api/index.js';

/** Tokens counted for each image, document or sound: about what the vendors count for an image of a megapixel. */
export const MEDIA_TOKENS = 1_600;

/**
 * An estimate of a request's input tokens, for providers that cannot count them: one token per
 * four characters of the text in `values` (every string, but in members `skip` names), the
 * tools' JSON, and MEDIA_TOKENS per object `isMedia` tells (whose base64 data is not text).
 */
export function estimateRequestTokens(values: readonly unknown[], tools: unknown, isMedia: (value: JsonObject) => boolean, skip: ReadonlySet<string>): number {
  let characters = 0;
  let media = 0;
  const walk = (value: unknown): void => {
    if (typeof value === 'string') characters += value.length;
    else if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      const member = value as JsonObject;
      if (isMedia(member)) {
        media += 1;
        return;
      }
      for (const [key, child] of Object.entries(member)) if (!skip.has(key)) walk(child);
    }
  };
  values.forEach(walk);
  if (Array.isArray(tools)) characters += JSON.stringify(tools).length;
  return Math.ceil(characters / 4) + media * MEDIA_TOKENS;
}

/** A tool call's arguments as the object the formats carry (`input`, `args`); text that is not a JSON object is kept under `arguments`. */
export function toolInputOf(argumentsText: unknown): JsonObject {
  if (typeof argumentsText !== 'string' || argumentsText.trim().length === 0) return {};
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as JsonObject;
  } catch {
    // falls through
  }
  return { arguments: argumentsText };
}
