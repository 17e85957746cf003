import type { EventSourceMessage } from 'eventsource-parser';
import { GatewayError, type UpstreamFacts } from '../../errors/index.js';
import { passThroughJson } from '../shared/json-members.js';
import { isRecord } from '../shared/message-content.js';
import type { StreamFrames } from '../shared/sse-stream.js';
import type { ResponseEventReceived, ResponsesCall, ResponsesModelProvider, ResponsesResult, ResponsesStream, StreamEvent } from '../../model-api/index.js';
import type { OpenAICompatibleClient } from './client.js';
import { errorKindOf, errorMessageOf, parseJson, usageFromWire } from './wire.js';

/**
 * OpenAI's own Responses API (`POST /responses`), passed through: the body goes upstream as
 * the caller sent it (reasoning items, built-in tools and every other field intact), the
 * response and its events come back as OpenAI sent them; usage is read for the log.
 */
export class OpenAIResponses implements ResponsesModelProvider {
  constructor(private readonly client: OpenAICompatibleClient) {}

  async create(call: ResponsesCall): Promise<ResponsesResult> {
    const response = await this.client.postJson('/responses', passThroughJson(call, { model: call.upstreamModel }), call, 'output');
    return { response, usage: usageFromWire(response.usage) };
  }

  stream(call: ResponsesCall): Promise<ResponsesStream> {
    const payload = passThroughJson(call, { model: call.upstreamModel, stream: true });
    return this.client.postForStream<ResponseEventReceived>('/responses', payload, call, new ResponsesEvents(this.client.name));
  }

  async countInputTokens(call: ResponsesCall): Promise<number> {
    const read = (text: string) => {
      const count = (parseJson(text) as { input_tokens?: unknown } | undefined)?.input_tokens;
      return typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : undefined;
    };
    const payload = passThroughJson(call, { model: call.upstreamModel });
    return (await this.client.postAndRead('/responses/input_tokens', payload, call, read, 'an object with input_tokens')).value;
  }

  async compact(call: ResponsesCall): Promise<ResponsesResult> {
    const response = await this.client.postJson('/responses/compact', passThroughJson(call, { model: call.upstreamModel }), call, 'output');
    return { response, usage: usageFromWire(response.usage) };
  }
}

/** The events that end a Responses stream: the response in its final state. */
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** The events that carry the response object: read for its usage and its model. */
const RESPONSE_EVENTS = new Set([...FINAL_EVENTS, 'response.created', 'response.queued', 'response.in_progress']);

function streamFailure(message: string, logDetail: Record<string, unknown>, upstream?: UpstreamFacts): GatewayError {
  return new GatewayError('provider_error', `${message} Try again later.`, { logDetail, ...(upstream === undefined ? {} : { upstream }) });
}

/**
 * The provider's Responses stream events, each handed on as it came. The stream is complete
 * with its final event; an `error` event fails it. An event its `event:` line names as one
 * that carries no response (an item, a text or argument delta: most of a stream) is not
 * parsed: nothing in the gateway reads it.
 */
class ResponsesEvents implements StreamFrames<StreamEvent<ResponseEventReceived>> {
  constructor(private readonly provider: string) {}

  read(message: EventSourceMessage, events: StreamEvent<ResponseEventReceived>[]): boolean {
    const named = message.event;
    if (named !== undefined && named !== 'error' && !RESPONSE_EVENTS.has(named)) {
      events.push({ type: 'response-event-received', eventType: named, event: null, json: message.data });
      return false;
    }
    const event = parseJson(message.data);
    if (!isRecord(event) || typeof event.type !== 'string') {
      throw streamFailure('The model provider sent a stream event the gateway could not read.', { provider: this.provider, frame: message.data.slice(0, 200) });
    }
    if (event.type === 'error') {
      const { upstreamType, upstreamCode } = errorKindOf({ error: event });
      throw streamFailure('The model provider reported an error during the stream.', {}, {
        provider: this.provider,
        message: errorMessageOf({ error: event }),
        ...(upstreamType === undefined ? {} : { errorType: upstreamType }),
        ...(upstreamCode === undefined ? {} : { errorCode: upstreamCode }),
      });
    }
    events.push({ type: 'response-event-received', eventType: event.type, event, json: message.data });
    if (!FINAL_EVENTS.has(event.type)) return false;
    const usage = isRecord(event.response) ? usageFromWire(event.response.usage) : null;
    if (usage !== null) events.push({ type: 'usage-reported', usage });
    return true;
  }

  endedEarly(): GatewayError {
    return streamFailure('The model provider ended the stream before it was complete.', { provider: this.provider, reason: 'stream ended without a final response event' });
  }
}
