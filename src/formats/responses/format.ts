import { GatewayError } from '../../errors/index.js';
import type { JsonObject } from '../../model-api/index.js';
import { encodeChatError } from '../chat-completions/errors.js';
import type { ApiFormat, DecodedCall } from '../types.js';
import { newResponsesId } from './ids.js';
import { decodeResponsesRequest, inputItemsOf, policyMessagesOf, type DecodedResponsesRequest, type McpToolRequest, type ToolNames } from './request-decoder.js';
import { encodeResponse, responseSkeleton, type ResponseIdentity } from './response-encoder.js';
import { ResponsesStreamEncoder } from './stream-encoder.js';

/** The fields of a Responses request the gateway reads itself; the rest is translated or passed through. */
export interface ResponsesBody extends JsonObject {
  model: string;
  input: string | unknown[];
  stream?: boolean | null;
  store?: boolean | null;
  previous_response_id?: string | null;
  max_output_tokens?: number | null;
  provider?: string;
}

/** A Responses request with what the route read for it: the conversation it continues, and where its answer is kept. */
export interface ResponsesTurn {
  body: ResponsesBody;
  /** The stored conversation of `previous_response_id` (its input items, then its output); empty for none. */
  history: JsonObject[];
  /** Keeps a finished response (unless `store` is false) before the caller receives it; never rejects. */
  keep(response: JsonObject): Promise<void>;
}

export interface ResponsesDecodedCall extends DecodedCall {
  turn: ResponsesTurn;
  /** This request's input as items, each with an id. */
  input: JsonObject[];
  /**
   * Why the request cannot be translated to a chat call (a built-in tool, an item type only the
   * Responses API has, …): the 400 for a model whose provider lacks its own Responses API. Null
   * when it translates. `body` then holds only the user messages, for the input policy.
   */
  untranslatable: GatewayError | null;
  /** The caller's tools by their chat function names, for the answer's calls (namespace and custom tools). */
  tools: ToolNames;
  /** The `mcp` tools naming servers of the gateway, whose tool loop the gateway runs. */
  mcp: McpToolRequest[];
  /** The id and time a translated response gets. */
  identity: ResponseIdentity;
}

/**
 * OpenAI's Responses API over the internal chat call: input items, instructions, function
 * tools, tool_choice and text.format become a chat request; the chat answer and stream become
 * a `response` object and the API's own events. Errors have the §4 shape, as OpenAI's.
 */
export const responsesFormat: ApiFormat<ResponsesTurn, ResponsesDecodedCall> = {
  name: 'responses',
  decodeRequest: (turn) => {
    const { body } = turn;
    const input = inputItemsOf(body.input);
    let decoded: DecodedResponsesRequest;
    let untranslatable: GatewayError | null = null;
    try {
      decoded = decodeResponsesRequest(body, { history: turn.history, input });
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      untranslatable = error;
      decoded = { chat: { messages: policyMessagesOf({ history: turn.history, input }) }, dropped: [], extensions: undefined, tools: new Map(), mcp: [] };
    }
    const { chat, dropped, extensions, tools, mcp } = decoded;
    return {
      model: body.model,
      stream: body.stream === true,
      providerHint: body.provider,
      body: chat,
      sourceJson: undefined,
      maxOutputTokens: body.max_output_tokens ?? null,
      choices: 1,
      storedPromptBytes: turn.history.length === 0 ? 0 : JSON.stringify(turn.history).length,
      turn,
      input,
      untranslatable,
      dropped,
      extensions,
      tools,
      mcp,
      identity: { id: newResponsesId('resp'), createdAt: Math.floor(Date.now() / 1000), model: body.model },
    };
  },
  encodeResponse: async (result, decoded) => {
    const response = encodeResponse(responseSkeleton(decoded.turn.body, decoded.identity), result.completion, result.usage, decoded.tools);
    await decoded.turn.keep(response);
    return response;
  },
  streamEncoder: (decoded, options) =>
    new ResponsesStreamEncoder({ ...options, skeleton: responseSkeleton(decoded.turn.body, decoded.identity), keep: decoded.turn.keep, tools: decoded.tools }),
  encodeError: encodeChatError,
};
