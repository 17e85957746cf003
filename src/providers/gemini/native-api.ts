import type { EventSourceMessage } from 'eventsource-parser';
import { GatewayError } from '../../errors/index.js';
import type { StreamFrames } from '../shared/sse-stream.js';
import type { ContentStreamEvent, EventStream, GenerateContentCall, GenerateContentProvider, JsonObject, TokenUsage } from '../../model-api/index.js';
import { usageOf } from './response-mapping.js';
import type { GenerateContentResponse } from './wire.js';

/** The caller's bytes as sent (the model is in the path, so nothing in the body changes), or its body serialised. */
export function callerBytes(call: GenerateContentCall): string | Buffer {
  return call.sourceJson ?? JSON.stringify(call.body);
}

/** Makes the stream's frame reader: told of each response (its id noted), parsing each frame (an error frame throws). */
type FramesOf = (noted: (frame: GenerateContentResponse) => void, parse: (data: string) => GenerateContentResponse) => StreamFrames<ContentStreamEvent>;

interface NativeParts {
  provider: string;
  /** Posts generateContent with the caller's bytes; the response body, checked. */
  generate(call: GenerateContentCall): Promise<unknown>;
  stream(call: GenerateContentCall, frames: FramesOf): Promise<EventStream<ContentStreamEvent>>;
  countTokens(call: GenerateContentCall): Promise<unknown>;
}

/**
 * The Gemini API for callers of that API: their body goes to generateContent,
 * streamGenerateContent or countTokens as they sent it, with the gateway's own key; the answer
 * comes back as the provider sent it, each stream frame's text unchanged, with the usage read
 * from it for the log and the limits.
 */
export function createNativeGeminiApi(parts: NativeParts): GenerateContentProvider {
  return {
    async generate(call) {
      const response = (await parts.generate(call)) as JsonObject;
      return { response, usage: usageOf((response as GenerateContentResponse).usageMetadata) };
    },
    stream: (call) => parts.stream(call, (noted, parse) => new NativeContentFrames(parts.provider, noted, parse)),
    async countTokens(call) {
      const value = await parts.countTokens(call);
      if (typeof value !== 'object' || value === null || typeof (value as JsonObject).totalTokens !== 'number') {
        throw new GatewayError('provider_error', 'The model provider sent a response the gateway could not read. Try again later.', { logDetail: { provider: parts.provider, reason: 'countTokens body has no totalTokens' } });
      }
      return value as JsonObject;
    },
  };
}

/**
 * The frames of a native stream as they came, each parsed once; each change of the cumulative
 * usageMetadata reported. The stream has no end marker: one that ends before any candidate got
 * its finishReason was cut off.
 */
class NativeContentFrames implements StreamFrames<ContentStreamEvent> {
  private last: TokenUsage | null = null;
  private finished = false;

  constructor(
    private readonly provider: string,
    private readonly noted: (frame: GenerateContentResponse) => void,
    private readonly parse: (data: string) => GenerateContentResponse,
  ) {}

  read(message: EventSourceMessage, events: ContentStreamEvent[]): boolean {
    const frame = this.parse(message.data);
    this.noted(frame);
    const usage = usageOf(frame.usageMetadata);
    if (usage !== null && (this.last === null || usage.promptTokens !== this.last.promptTokens || usage.totalTokens !== this.last.totalTokens || usage.completionTokens !== this.last.completionTokens)) {
      this.last = usage;
      events.push({ type: 'usage-reported', usage });
    }
    if (frame.candidates?.some((candidate) => candidate.finishReason !== undefined && candidate.finishReason !== 'FINISH_REASON_UNSPECIFIED') === true || frame.promptFeedback?.blockReason !== undefined) this.finished = true;
    events.push({ type: 'content-frame-received', data: message.data, value: frame as JsonObject });
    return false;
  }

  endedEarly(): GatewayError | null {
    if (this.finished) return null;
    return new GatewayError('provider_error', 'The model provider ended the stream before the answer was complete. Try again.', { logDetail: { provider: this.provider, reason: 'stream truncated' } });
  }
}
