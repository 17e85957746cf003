import type { RecordedRequest } from './fake-server.js';
import { errorBody, startFakeGemini, textFrames, textResponse, type FakeGemini, type GeminiReply } from './gemini.js';
import type { ChatScript, ConformanceFake, UpstreamChatView } from '../providers/conformance.js';

const USAGE = { promptTokens: 11, completionTokens: 7 };

/** The fake behind the shared conformance suite: its neutral scripts in Gemini's wire format. */
export async function startGeminiConformanceFake(): Promise<ConformanceFake> {
  return geminiConformanceFake(await startFakeGemini());
}

/** A Gemini fake seen through the conformance suite's neutral scripts. */
export function geminiConformanceFake(fake: FakeGemini): ConformanceFake {
  return {
    server: fake.server,
    scriptChat: (script) => fake.reply('chat', conformanceReply(script)),
    chatRequests: () => fake.requests.filter((request) => /:(stream)?generateContent/i.test(request.path)).map(geminiChatView),
    close: () => fake.close(),
  };
}

/** Streams the conformance suite scripts without usage still report some, as Gemini always does. */
function conformanceReply(script: ChatScript): GeminiReply {
  const usage = USAGE;
  switch (script.kind) {
    case 'reply':
      return { response: textResponse(script.text, { usage: script.usage }) };
    case 'stream':
      return { frames: textFrames(script.deltas, script.usage) };
    case 'error':
      return { error: script.status, message: script.message };
    case 'delay-headers':
      return { delayMs: script.delayMs };
    case 'stream-truncated':
      return { frames: textFrames(script.deltas, usage, { finish: false }), end: 'drop' };
    case 'stream-error-event':
      return { frames: [...textFrames(script.deltas, usage, { finish: false }), errorBody(503, script.message)] };
    case 'stream-hang':
      return { frames: textFrames(script.deltas, usage, { finish: false }), end: 'hang', onClose: script.onClose };
  }
}

interface WirePart {
  text?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { fileUri: string };
}

export function geminiChatView(request: RecordedRequest): UpstreamChatView {
  const body = request.json ?? {};
  const contents: ({ parts?: WirePart[] } | undefined)[] = [body.systemInstruction, ...(body.contents ?? [])];
  const parts = contents.flatMap((content) => content?.parts ?? []);
  const inline = parts.flatMap((part) => (part.inlineData !== undefined ? [{ mimeType: part.inlineData.mimeType, base64: part.inlineData.data }] : []));
  const key = request.headers['x-goog-api-key'];
  return {
    credential: Array.isArray(key) ? key[0] : key,
    text: parts.flatMap((part) => (typeof part.text === 'string' ? [part.text] : [])).join('\n'),
    images: inline.filter((item) => item.mimeType.startsWith('image/')),
    imageUrls: parts.flatMap((part) => (part.fileData !== undefined ? [part.fileData.fileUri] : [])),
    files: inline.filter((item) => !item.mimeType.startsWith('image/')),
    streamed: request.path.includes(':streamGenerateContent'),
  };
}

