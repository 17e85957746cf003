// The request bodies every target gets, written once per run as files (wrk reads them).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MESSAGES = [{ role: 'user', content: 'Hello, who are you?' }];

/** A 1 MiB PNG-looking payload as a base64 data URI: the image chat's content. */
function imageDataUri() {
  const png = Buffer.alloc(1024 * 1024, 1);
  png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return `data:image/png;base64,${png.toString('base64')}`;
}

const CHAT = '/v1/chat/completions';

/** The endpoint each body is sent to. */
export const PATHS = {
  chat: CHAT,
  stream: CHAT,
  'stream-tokens': CHAT,
  messagesStream: '/v1/messages',
  responsesStream: '/v1/responses',
  // The chat model through the Gemini API's paths (translated to and from the chat stream), as the SDKs ask: server-sent events.
  geminiStream: '/v1beta/models/gpt-4o-mini:streamGenerateContent?alt=sse',
  fallback: CHAT,
  cached: CHAT,
  embeddings: '/v1/embeddings',
  image: CHAT,
};

export const BODIES = {
  chat: () => ({ stream: false, model: 'gpt-4o-mini', messages: MESSAGES }),
  stream: () => ({ stream: true, model: 'gpt-4o-mini', messages: MESSAGES }),
  // Answered as providers stream tokens (fake-upstream.mjs); usage asked for, so every target gets the same frames.
  'stream-tokens': () => ({
    stream: true,
    stream_options: { include_usage: true },
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Count to twenty, one word per event.' }],
  }),
  messagesStream: () => ({ stream: true, model: 'gpt-4o-mini', max_tokens: 1024, messages: MESSAGES }),
  // Not stored: the scenario measures the format, not a database write per request.
  responsesStream: () => ({ stream: true, model: 'gpt-4o-mini', input: MESSAGES, store: false }),
  geminiStream: () => ({ contents: MESSAGES.map((message) => ({ role: 'user', parts: [{ text: message.content }] })) }),
  // A model whose only deployment is down (bench/run.mjs routes it): every request falls back to gpt-4o-mini.
  fallback: () => ({ stream: false, model: 'gpt-4o', messages: MESSAGES }),
  // The one model the bench's cache policy applies to (lib/targets.mjs), at temperature 0: the same body is a hit after the first.
  cached: () => ({ stream: false, model: 'gpt-4.1-nano', temperature: 0, messages: MESSAGES }),
  embeddings: () => ({ model: 'text-embedding-3-small', input: 'The quick brown fox jumps over the lazy dog' }),
  image: () => ({
    stream: false,
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this image?' }, { type: 'image_url', image_url: { url: imageDataUri() } }] }],
  }),
};

/** Writes every body to `dir`; returns { name: path }. */
export function writeBodies(dir) {
  return Object.fromEntries(
    Object.entries(BODIES).map(([name, make]) => {
      const path = join(dir, `${name}.json`);
      writeFileSync(path, JSON.stringify(make()));
      return [name, path];
    }),
  );
}
