import { estimateRequestTokens, MEDIA_TOKENS } from '../estimate.js';
import type { MessagesBody } from './request.js';

/** Tokens counted for each image or document: about what Anthropic counts for an image of a megapixel. */
export const MEDIA_BLOCK_TOKENS = MEDIA_TOKENS;

const NOT_TEXT = new Set(['type', 'cache_control']);

/**
 * An estimate of a Messages request's input tokens, for providers that cannot count them:
 * one token per four characters of its text (system, text blocks, tool results, tool
 * inputs, tool names, descriptions and schemas), and MEDIA_BLOCK_TOKENS per image or
 * document. Base64 data is not text and is not counted as such.
 */
export function estimateInputTokens(body: MessagesBody): number {
  const contents = body.messages.map((message) => message.content);
  return estimateRequestTokens([body.system, ...contents], body.tools, (block) => block.type === 'image' || block.type === 'document', NOT_TEXT);
}
