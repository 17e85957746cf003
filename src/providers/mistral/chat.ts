import { invalidBody } from '../../errors/index.js';
import { ChatCompletionChunks, usageFromWire, type OpenAICompatibleClient } from '../openai/index.js';
import { fromCallerInput } from '../shared/provider-json.js';
import { isRecord } from '../shared/message-content.js';
import type { ChatCall, ChatCompletionResult, ChatModelProvider, ChatStream, JsonObject } from '../../model-api/index.js';

/*
 * Mistral's chat completions API (docs.mistral.ai, "Chat Completion"): OpenAI's shape with its
 * own names for a few fields, and none for others, which Mistral refuses as extra inputs.
 */

/** Fields Mistral has no equivalent for: left out, named in the log. */
const HINT_FIELDS = ['logit_bias', 'store', 'metadata', 'user', 'service_tier', 'stream_options', 'reasoning_effort'] as const;

/** The caller's fields Mistral takes as they are. */
const KEPT = ['messages', 'temperature', 'top_p', 'max_tokens', 'stop', 'tools', 'response_format', 'presence_penalty', 'frequency_penalty', 'n', 'parallel_tool_calls', 'prediction', 'safe_prompt'] as const;

export function hintsDroppedOf(body: JsonObject): string[] {
  return HINT_FIELDS.filter((field) => body[field] !== undefined && body[field] !== null);
}

/** File parts: Mistral's chat takes images and `document_url` links, not inline documents. */
function refuseFiles(messages: unknown): void {
  if (!Array.isArray(messages)) throw invalidBody('messages must be an array.', 'messages');
  messages.forEach((message: unknown, index) => {
    const content = isRecord(message) ? message.content : undefined;
    if (!Array.isArray(content)) return;
    content.forEach((part: unknown, partIndex) => {
      if (isRecord(part) && (part.type === 'file' || part.type === 'input_file')) {
        throw invalidBody(`messages[${index}].content[${partIndex}]: Mistral's chat models take no inline files; send the text, or images.`, `messages[${index}].content[${partIndex}]`);
      }
    });
  });
}

/** The Mistral request of a chat call. */
export function toMistralRequest(model: string, body: JsonObject, stream: boolean): JsonObject {
  refuseFiles(body.messages);
  // The caller would get no log probabilities: refused rather than left out.
  if (body.logprobs === true) throw invalidBody('This model does not return log probabilities; leave logprobs out.', 'logprobs');
  const request: JsonObject = { model };
  for (const field of KEPT) if (body[field] !== undefined && body[field] !== null) request[field] = body[field];
  if (body.max_completion_tokens !== undefined && body.max_completion_tokens !== null) request.max_tokens = body.max_completion_tokens;
  if (typeof body.seed === 'number') request.random_seed = body.seed;
  if (body.tool_choice !== undefined && body.tool_choice !== null) request.tool_choice = body.tool_choice === 'required' ? 'any' : body.tool_choice;
  if (stream) request.stream = true;
  return request;
}

/** Chat through Mistral's own API; its stream ends with `data: [DONE]` and carries usage on the last chunk. */
export class MistralChat implements ChatModelProvider {
  constructor(private readonly client: OpenAICompatibleClient) {}

  hintsDropped(body: JsonObject): string[] {
    return hintsDroppedOf(body);
  }

  async complete(call: ChatCall): Promise<ChatCompletionResult> {
    const payload = fromCallerInput(() => Buffer.from(JSON.stringify(toMistralRequest(call.upstreamModel, call.body, false))));
    const completion = await this.client.postJson('/chat/completions', payload, call, 'choices');
    return { completion, usage: usageFromWire(completion.usage) };
  }

  stream(call: ChatCall): Promise<ChatStream> {
    const payload = fromCallerInput(() => Buffer.from(JSON.stringify(toMistralRequest(call.upstreamModel, call.body, true))));
    return this.client.postForStream('/chat/completions', payload, call, new ChatCompletionChunks(this.client.name));
  }
}
