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

type ChatCounter = (chat: { role: 'system' | 'user' | 'assistant'; content: string }[]) => number;

/** The models whose tokenizer is o200k_base. */
const O200K_MODELS = /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o|codex-)/;

/** OpenAI's count for one image at high detail and 1024×1024 (its vision guide): the count an image adds here. */
const IMAGE_TOKENS = 765;

let counter: ChatCounter | null = null;
let loading: Promise<void> | null = null;

function load(): void {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then(
    (encoding) => {
      // The chat framing of every o200k model is GPT-4o's: three tokens a message and three to prime the answer.
      counter = (chat) => encoding.encodeChat(chat, 'gpt-4o', { disallowedSpecial: new Set() }).length;
    },
    () => {
      // Without the tokenizer the count stays unknown; the format falls back to its estimate.
    },
  );
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
  if (counter === null) {
    load();
    return null;
  }
  const extra = { tokens: 0 };
  const chat: Parameters<ChatCounter>[0] = [];
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isRecord(message)) continue;
    const role = message.role === 'assistant' ? 'assistant' : message.role === 'system' || message.role === 'developer' ? 'system' : 'user';
    let content = textOf(message.content, extra);
    if (Array.isArray(message.tool_calls)) content += JSON.stringify(message.tool_calls);
    chat.push({ role, content });
  }
  const tools = Array.isArray(body.tools) && body.tools.length > 0 ? [{ role: 'system' as const, content: JSON.stringify(body.tools) }] : [];
  try {
    return counter([...tools, ...chat]) + extra.tokens;
  } catch {
    // Text the tokenizer refuses (it reads special tokens such as <|endoftext|>): the count is not known.
    return null;
  }
}
