import type { Dispatcher } from 'undici';
import { GatewayError } from '../../errors/index.js';
import { passThroughJson } from '../shared/json-members.js';
import { afterFirstItem, finishBody, readServerSentEventBatches } from '../shared/sse.js';
import { transportError } from '../shared/upstream-http.js';
import type { ChatCall, ChatCompletionResult, ChatModelProvider, ChatStream, ChatStreamEvent, JsonObject } from '../types.js';
import type { OpenAICompatibleClient } from './client.js';
import { errorKindOf, errorMessageOf, parseJson, usageFromWire } from './wire.js';

type StreamFailure = 'truncated' | 'malformed-frame' | 'error-event' | 'idle-timeout' | 'transport';

const FAILURE_MESSAGES: Record<StreamFailure, string> = {
  truncated: 'The model provider ended the stream before it was complete.',
  'malformed-frame': 'The model provider sent a stream frame the gateway could not read.',
  'error-event': 'The model provider reported an error during the stream.',
  'idle-timeout': 'The model provider stopped sending the stream.',
  transport: 'The connection to the model provider failed during the stream.',
};

/**
 * Chat completions, passed through: the request body goes upstream as the caller sent it
 * (the route only removed `provider` and `stream`), the response comes back as the provider sent it.
 */
export class OpenAICompatibleChat implements ChatModelProvider {
  constructor(private readonly client: OpenAICompatibleClient) {}

  async complete(call: ChatCall): Promise<ChatCompletionResult> {
    const { json: completion } = await this.client.postJson('/chat/completions', passThroughJson(call, { model: call.upstreamModel }), call);
    return { completion, usage: usageFromWire(completion.usage) };
  }

  async stream(call: ChatCall): Promise<ChatStream> {
    // Usage is always asked for, so it is accounted even when the caller did not ask to see it.
    const streamOptions = { ...(call.body.stream_options as JsonObject | undefined), include_usage: true };
    const payload = passThroughJson(call, { model: call.upstreamModel, stream: true, stream_options: streamOptions });
    const response = await this.client.postForStream('/chat/completions', payload, call, 'text/event-stream');
    return { events: await afterFirstItem(this.events(response.body, call)) };
  }

  /**
   * The provider's `chat.completion.chunk` frames as stream events. A failure before the first
   * event is thrown (the caller still gets a proper HTTP status); after it, it becomes
   * `stream-failed`. The stream only counts as complete with `data: [DONE]`.
   */
  private async *events(body: Dispatcher.ResponseData['body'], call: ChatCall): AsyncGenerator<ChatStreamEvent> {
    const provider = this.client.name;
    let started = false;
    let failure: { kind: StreamFailure; error?: GatewayError; logDetail: Record<string, unknown> } | null = null;
    let done = false;
    try {
      // One turn of the reader per network chunk; `read` ends the whole stream.
      read: for await (const messages of readServerSentEventBatches(body, { destroyOnReturn: false })) {
        for (const message of messages) {
          if (message.data === '[DONE]') {
            done = true;
            break read;
          }
          const chunk = parseJson(message.data);
          if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
            failure = { kind: 'malformed-frame', logDetail: { provider, frame: message.data.slice(0, 200) } };
            break read;
          }
          const frame = chunk as JsonObject;
          if (message.event === 'error' || (frame.error !== undefined && frame.error !== null)) {
            failure = { kind: 'error-event', logDetail: { provider, upstreamMessage: errorMessageOf(frame), ...errorKindOf(frame) } };
            break read;
          }
          const usage = usageFromWire(frame.usage);
          const hasChoices = Array.isArray(frame.choices) && frame.choices.length > 0;
          if (usage === null || hasChoices) {
            delete frame.usage;
            started = true;
            yield { type: 'chunk-received', chunk: frame };
          }
          if (usage !== null) {
            started = true;
            // A usage-only chunk (`choices: []`) is the provider's own; the route shows it when asked.
            yield hasChoices ? { type: 'usage-reported', usage } : { type: 'usage-reported', usage, chunk: frame };
          }
        }
      }
      if (!done && failure === null) failure = { kind: 'truncated', logDetail: { provider, reason: 'stream ended without [DONE]' } };
    } catch (error) {
      const mapped = transportError(error, provider, call.signal);
      failure = { kind: mapped.code === 'provider_timeout' ? 'idle-timeout' : 'transport', error: mapped, logDetail: { provider, ...mapped.logDetail } };
    } finally {
      finishBody(body, done);
    }
    if (failure === null) return;
    if (!started) {
      throw failure.error ?? new GatewayError('provider_error', `${FAILURE_MESSAGES[failure.kind]} Try again later.`, { logDetail: failure.logDetail });
    }
    yield { type: 'stream-failed', message: FAILURE_MESSAGES[failure.kind], logDetail: failure.logDetail };
  }
}
