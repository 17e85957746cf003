import { isRecord } from '../shared/message-content.js';
import type { JsonObject } from '../../model-api/index.js';

/*
 * OpenAI's own count of a chat prompt, made locally: its chat completions report usage only at
 * the end of a stream, and a format that shows the prompt's count in its first event (the
 * Messages API's message_start) needs it before. gpt-tokenizer's o200k_base encoding is the one
 * of OpenAI's current models (GPT-4o, GPT-4.1, GPT-5, o-series), with the chat framing OpenAI
 * counts per message. Loaded on first use, off the request path (its tables take a second and
 * some 35 MB): until then the count is unknown.
 */

/** Counts the tokens of a text; special tokens such as <|endoftext|> count as the text they are. */
type TextCounter = (text: string) => number;

/** The models whose tokenizer is o200k_base. */
const O200K_MODELS = /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o|codex-)/;

/** OpenAI's count for one image at high detail and 1024×1024 (its vision guide): the count an image adds here. */
const IMAGE_TOKENS = 765;

/**
 * OpenAI's chat framing for its current models: each message costs three tokens and its role's
 * one beside its content, and three more prime the answer (what gpt-tokenizer's encodeChat
 * counts for GPT-4o, without encoding the framing each time).
 */
const TOKENS_PER_MESSAGE = 4;
const REPLY_PRIMING_TOKENS = 3;

/**
 * Counts already made, by text. A coding agent sends its whole conversation again with every
 * turn (a system prompt of 80 kB, the history): each text is tokenized once, and a later turn
 * pays only a look-up for it. Bounded by entries and characters, oldest dropped first.
 */
const cache = new Map<string, number>();
const CACHE_ENTRIES = 4_096;
const CACHE_CHARACTERS = 16_000_000;
let cachedCharacters = 0;

let counter: TextCounter | null = null;
let loading: Promise<void> | null = null;

function load(): void {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then(
    (encoding) => {
      const options = { disallowedSpecial: new Set<string>() };
      counter = (text) => encoding.countTokens(text, options);
    },
    () => {
      // Without the tokenizer the count stays unknown; the format falls back to its estimate.
    },
  );
}

function countText(count: TextCounter, text: string): number {
  if (text.length === 0) return 0;
  const known = cache.get(text);
  if (known !== undefined) return known;
  const tokens = count(text);
  cache.set(text, tokens);
  cachedCharacters += text.length;
  while (cache.size > CACHE_ENTRIES || cachedCharacters > CACHE_CHARACTERS) {
    const oldest = cache.keys().next().value as string;
    cache.delete(oldest);
    cachedCharacters -= oldest.length;
  }
  return tokens;
}

/** Text of a message's content for the count; images add IMAGE_TOKENS each to `extra`. */
function textOf(content: unknown, extra: { tokens: number }): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (typeof part.text === 'string') text += part.text;
    else if (part.type === 'image_url') extra.tokens += IMAGE_TOKENS;
  }
  return text;
}

/**
 * The prompt tokens OpenAI will count for a chat body of an o200k model: its messages with their
 * framing, tool calls and tool results as text, the tools' definitions as their JSON (OpenAI does
 * not publish how it renders them, so that part is near, not exact); null for another model, or
 * while the tokenizer loads.
 */
export function countPromptTokens(body: JsonObject, upstreamModel: string): number | null {
  if (!O200K_MODELS.test(upstreamModel)) return null;
  const count = counter;
  if (count === null) {
    load();
    return null;
  }
  const extra = { tokens: 0 };
  const messages = Array.isArray(body.messages) ? body.messages : [];
  let tokens = REPLY_PRIMING_TOKENS;
  try {
    for (const message of messages) {
      if (!isRecord(message)) continue;
      tokens += TOKENS_PER_MESSAGE + countText(count, textOf(message.content, extra));
      if (Array.isArray(message.tool_calls)) tokens += countText(count, JSON.stringify(message.tool_calls));
    }
    if (Array.isArray(body.tools) && body.tools.length > 0) tokens += TOKENS_PER_MESSAGE + countText(count, JSON.stringify(body.tools));
  } catch {
    // Text the tokenizer cannot read: the count is not known.
    return null;
  }
  return tokens + extra.tokens;
}
