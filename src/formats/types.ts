import type { GatewayError } from '../errors/index.js';
import type { CallExtensions, ChatCompletionResult, ChunkReceived, JsonObject, TokenUsage, UsageReported } from '../model-api/index.js';

/**
 * The contract every public API format (chat completions, Messages, Responses) implements
 * over the one model call (src/calls/). The gateway's internal call is OpenAI's chat shape
 * (docs/decisions/0002): a format decodes its request into that call, and encodes the call's
 * answer, stream and errors into its own shape. Formats are pure: no HTTP, no vendor.
 */

/** A format's request as the internal chat call: what the model-call path and the providers take. */
export interface DecodedCall {
  /** The catalog id or alias the caller asked for (the answers show it). */
  model: string;
  stream: boolean;
  providerHint?: string | undefined;
  /** The internal chat-completions body (OpenAI's shape) without `model`, `stream` and `provider`. */
  body: JsonObject;
  /**
   * The caller's JSON, when `body` is it parsed minus the gateway's own fields: pass-through
   * adapters send these bytes patched rather than serialise `body` again (see PassThroughSource).
   */
  sourceJson?: Buffer | undefined;
  /** The most tokens the answer may have (per choice), for the limits' estimate; null when unset. */
  maxOutputTokens: number | null;
  /** How many answers are asked for (chat's `n`; 1 elsewhere). */
  choices: number;
  /**
   * Prompt the body does not carry, in bytes of JSON, for the limits' estimate: a stored
   * conversation the format puts before the input (Responses' `previous_response_id`).
   */
  storedPromptBytes?: number;
  /**
   * The caller's fields the translation leaves out because they only tune how a vendor serves
   * the request (decisions §9 rule 2), as paths (`context_management`, `tools[2].cache_control`):
   * named in the request log and in `x-modelgate-dropped` when the call is translated. Empty
   * when nothing is dropped, and unused when a provider speaks the format itself.
   */
  dropped: string[];
  /** What the caller asked for that the chat body has no member for (ChatCall.extensions). */
  extensions?: CallExtensions | undefined;
}

/** What a stream encoder is made with besides the decoded request. */
export interface StreamEncoderOptions {
  /** Characters of answer text the request log's transcript keeps (the log stores no more). */
  transcriptCharacters: number;
  /**
   * The prompt's token count as the provider will report it, made locally, for a format whose
   * first event shows it when the provider reports usage only at the end; null when unknown.
   */
  promptTokens?: (() => number | null) | undefined;
}

/**
 * Turns one provider stream's events into the format's server-sent-event frames. Called
 * synchronously per event, the frames of one upstream network chunk sent in one write (see
 * src/server/routes/stream-relay.ts); it keeps a bounded transcript for the request log.
 * `D`: the stream's data events (chat chunks for translated streams; a native API's own
 * events where a provider speaks the format itself).
 */
export interface StreamEncoder<D = ChunkReceived> {
  /** The response's content type, when the stream is not server-sent events (a streamed JSON array). */
  readonly contentType?: string;
  /** The frames for one data event, '' for none. */
  encode(event: D): string;
  /** Usage as reported (the running total): frames to send now, usually ''. */
  usage(event: UsageReported): string;
  /**
   * The frames that end a complete stream; `usage` is the last reported, null when none was.
   * A promise when the format keeps its answer first (a stored response the caller may
   * continue as soon as it has seen the end): the relay writes the frames once it settles.
   */
  end(usage: TokenUsage | null): string | Promise<string>;
  /** The frames that end a stream whose provider failed after it started. */
  fail(error: GatewayError, requestId: string): string;
  /** What the request log keeps of the stream (bounded); `complete` is false when it failed or was cut off. */
  transcript(usage: TokenUsage | null, complete: boolean): JsonObject;
}

/** An error as a format answers it: the body, and headers besides the shared ones (`x-should-retry`, `retry-after`, limits). */
export interface EncodedError {
  body: object;
  headers: Record<string, string>;
}

/**
 * Where a format's clients send the gateway key besides `Authorization: Bearer` and
 * `X-API-Key` (which every route takes): further headers, and a query parameter. A key in the
 * query is read for authentication only: the request log keeps the route's path, never the URL.
 */
export interface CredentialLocations {
  headers?: readonly string[];
  query?: string;
}

/**
 * The part of a format the HTTP layer needs for a route: every route names its format in its
 * config, and the error handler answers in its shape, the auth hook looks for the key where
 * its clients send it.
 */
export interface ErrorFormat {
  readonly name: string;
  encodeError(error: GatewayError, requestId: string): EncodedError;
  readonly credentials?: CredentialLocations;
}

/**
 * A public API format over the internal chat call. `B`: its request as the route read it (the
 * body, or for a format that names the model in its path, the path's parts and the body);
 * `D`: its decoded request.
 */
export interface ApiFormat<B, D extends DecodedCall = DecodedCall> extends ErrorFormat {
  /** The request as the internal call; throws the gateway's error (docs/errors.md: a 400 naming the field) for what has no equivalent. */
  decodeRequest(body: B, sourceJson: Buffer | undefined): D;
  /** The internal call's answer as the format's response body (a promise when the format keeps it first, as `end`). */
  encodeResponse(result: ChatCompletionResult, decoded: D): JsonObject | Promise<JsonObject>;
  /** A fresh encoder for one stream of the internal call. */
  streamEncoder(decoded: D, options: StreamEncoderOptions): StreamEncoder;
}

/** The kinds of object held in a vendor account that a request body can name (docs/security.md, "Upstream objects"). */
export type UpstreamObjectKind = 'conversations' | 'prompts' | 'items' | 'vectorStores' | 'files' | 'containers' | 'cachedContents';

/** An object of the vendor account a request names, and the body field that names it. */
export interface UpstreamObjectRef {
  kind: UpstreamObjectKind;
  id: string;
  param: string;
}
