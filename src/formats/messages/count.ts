import type { JsonObject } from '../../model-api/index.js';
import type { MessagesBody } from './request.js';

/** Tokens counted for each image or document: about what Anthropic counts for an image of a megapixel. */
export const MEDIA_BLOCK_TOKENS = 1_600;

/**
 * An estimate of a Messages request's input tokens, for providers that cannot count them:
 * one token per four characters of its text (system, text blocks, tool results, tool
 * inputs, tool names, descriptions and schemas), and MEDIA_BLOCK_TOKENS per image or
 * document. Base64 data is not text and is not counted as such.
 */
export function estimateInputTokens(body: MessagesBody): number {
  let characters = 0;
  let media = 0;
  const walk = (value: unknown): void => {
    if (typeof value === 'string') characters += value.length;
    else if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      const block = value as JsonObject;
      if (block.type === 'image' || block.type === 'document') {
        media += 1;
        return;
      }
      for (const [key, member] of Object.entries(block)) if (key !== 'type' && key !== 'cache_control') walk(member);
    }
  };
  walk(body.system);
  for (const message of body.messages) walk(message.content);
  if (Array.isArray(body.tools)) characters += JSON.stringify(body.tools).length;
  return Math.ceil(characters / 4) + media * MEDIA_BLOCK_TOKENS;
}
