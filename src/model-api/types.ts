/**
 * The provider contract the core owns. Routes, VETTING and agents talk only to these
 * interfaces; each vendor adapter implements them in its own module under providers/.
 *
 * The gateway's own request/response language is the OpenAI shape (the public API is
 * OpenAI-compatible): OpenAI-compatible adapters pass it through, other adapters translate
 * it to and from their native wire format.
 */

/** An OpenAI-shaped JSON object. Kept open: pass-through adapters forward unknown fields. */
export type JsonObject = Record<string, unknown>;

/**
 * Token usage as reported by the provider, in whole numbers of at least zero (adapters read
 * every count with `tokenCount`). `null` everywhere means "not reported", never zero.
 */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Prompt tokens served from the provider's cache, when reported. */
  cachedPromptTokens: number | null;
  /**
   * Prompt tokens written to the provider's cache by this call (Anthropic's
   * `cache_creation_input_tokens`), part of promptTokens; absent or null when not reported.
   */
  cacheWritePromptTokens?: number | null;
  /** Of cacheWritePromptTokens, those written to 1-hour cache entries (priced apart from 5-minute ones). */
  cacheWrite1hPromptTokens?: number | null;
}

/**
 * A call whose body came from the caller: `body` is `sourceJson` parsed, minus the
 * gateway's own fields (`model`, `stream`, `provider`). A pass-through adapter sends those
 * bytes with its own members patched in rather than serialise `body` again (megabytes of
 * base64 media cost real time to serialise). Calls the gateway builds have no `sourceJson`.
 */
export interface PassThroughSource {
  body: JsonObject;
  sourceJson?: Buffer | undefined;
}

/**
 * What a provider said about one call besides its answer, written by its adapter as the
 * response arrives (an error response too). One per attempt, made by the model-call path,
 * which reads it once the attempt ended: no table keyed by request ids.
 */
export interface UpstreamNotes {
  /** The vendor's own id of the call (OpenAI's `x-request-id`, Anthropic's `request-id`, Gemini's `responseId`). */
  providerRequestId?: string;
  /** Share of the provider's request rate limit left after the call (0…1), when its response headers said. */
  rateLimitShare?: number;
}

export interface CallContext {
  /** Aborts the upstream call: client disconnect, run budget or shutdown. */
  signal: AbortSignal;
  requestId: string;
  /** Where the adapter notes what the provider said besides its answer (absent: nobody reads it). */
  notes?: UpstreamNotes | undefined;
  /**
   * Longest wait, from the call's start, for the answer to begin (a whole JSON answer, a
   * stream's first event), when shorter than upstream.timeoutMs: a routed attempt's deadline.
   */
  timeoutMs?: number | undefined;
}

export interface ChatCall extends CallContext, PassThroughSource {
  /** Model id as the provider knows it. */
  upstreamModel: string;
  /**
   * The OpenAI chat-completions request body (messages, temperature, tools,
   * response_format, …) without `model`, `stream` and `provider`.
   */
  body: JsonObject;
  /**
   * What the caller asked for that OpenAI's chat body has no member for (a translated call of
   * another format, or chat's own `reasoning_effort` read for a vendor without it); absent for
   * a plain chat call. Beside the body, never in it, so a pass-through cannot send it upstream
   * (docs/decisions/0021).
   */
  extensions?: CallExtensions | undefined;
}

/** How hard a model thinks, in the words of every vendor: OpenAI's efforts plus Anthropic's `max`. */
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/**
 * Reasoning the caller asked for, whichever of the four forms it came in (chat
 * `reasoning_effort`, Responses `reasoning`, Messages `thinking` / `output_config.effort`,
 * Gemini `thinkingConfig`). Each adapter maps it to its vendor's own form.
 */
export interface ReasoningRequest {
  /** The caller's field, for the request log when the model cannot take it. */
  param: string;
  /** How hard to think; null when the caller gave only a budget, or left it to the model (adaptive). */
  effort: ReasoningEffort | null;
  /** At most this many thinking tokens; 0 turns thinking off; null when no budget was given. */
  budgetTokens: number | null;
  /** Whether the caller wants the reasoning back in the answer (thinking blocks, summaries, thoughts). */
  includeThoughts: boolean;
}

/** The built-in web search the caller declared: served by the vendor's own search tool. */
export interface WebSearchRequest {
  /** The caller's tool, e.g. `tools[7]`. */
  param: string;
  /** The most searches in one answer, when the caller bounds it. */
  maxUses: number | null;
  allowedDomains: string[] | null;
  blockedDomains: string[] | null;
}

/** The typed parts of the internal call beside OpenAI's chat body (see ChatCall.extensions). */
export interface CallExtensions {
  reasoning?: ReasoningRequest;
  /** Sampling from the k most likely tokens (Anthropic `top_k`, Gemini `topK`). */
  topK?: { param: string; value: number };
  webSearch?: WebSearchRequest;
}

/**
 * The model's reasoning in the internal chat shape, on an assistant message (an answer's, or
 * an earlier turn's sent back) and on a stream chunk's delta. `reasoning_content` is the text
 * (or summary) as the OpenAI-compatible APIs that show reasoning name it; `reasoning_signature`
 * the vendor's opaque token that must come back with that text on a later turn, prefixed
 * `<provider>:` by the adapter that made it, so only the same provider is ever sent it. On a
 * delta the signature ends the reasoning block it belongs to.
 */
export interface ReasoningMembers {
  reasoning_content?: string;
  reasoning_signature?: string;
}

export interface ChatCompletionResult {
  /** OpenAI `chat.completion` object; its `model` is the upstream model. */
  completion: JsonObject;
  usage: TokenUsage | null;
}

/**
 * Usage as soon as a frame carries it (may come on any chunk). `chunk`: the provider's own
 * usage-only `chat.completion.chunk` (`choices: []`), shown as is to a chat caller that asked
 * for `stream_options.include_usage`; without it the chat format builds that chunk from
 * `usage`. Adapters that report usage in several steps send the running total each time.
 */
export interface UsageReported {
  type: 'usage-reported';
  usage: TokenUsage;
  chunk?: JsonObject;
}

/** The provider failed after the stream started: the client gets its format's error frame. */
export interface StreamFailed {
  type: 'stream-failed';
  message: string;
  logDetail?: Record<string, unknown>;
  /** The gateway's own error, when the gateway ended the stream (a guardrail blocked the answer): sent as it is, not as a provider failure. */
  error?: Error;
}

/** Events of a provider stream, noun-verb names as everywhere in the code: its data events `D`, usage and failure. */
export type StreamEvent<D> = D | UsageReported | StreamFailed;

/**
 * An OpenAI `chat.completion.chunk` object; a `usage` member on it is not shown (usage comes
 * as `usage-reported`). `json`: the text `chunk` was parsed from, when the provider sent the
 * chunk as it is: the chat format then changes members in the text instead of serialising
 * the object again.
 */
export interface ChunkReceived {
  type: 'chunk-received';
  chunk: JsonObject;
  json?: string;
}

/** Events of a chat stream. */
export type ChatStreamEvent = StreamEvent<ChunkReceived>;

/**
 * Takes a stream's events as they are read: the events of one upstream network chunk at a
 * time, pushed synchronously. No promise or turn of the event loop per event: a stream of a
 * dozen frames through async iterators cost more than the bare transport of it (measured).
 */
export interface StreamReader<E> {
  /** Returns false to stop reading from the provider until `EventStream.resume()` (the client is slow). */
  onEvents(events: readonly E[]): boolean;
  /**
   * Called once, last: the provider ended the stream, or it failed (the last event was then
   * `stream-failed`), or the call was aborted.
   */
  onEnd(): void;
}

export interface EventStream<E> {
  /** Starts handing events to `reader`, those read before `stream()` resolved first. Call once. */
  read(reader: StreamReader<E>): void;
  /** Goes on reading after `onEvents` returned false. */
  resume(): void;
}

export type ChatStreamReader = StreamReader<ChatStreamEvent>;
export type ChatStream = EventStream<ChatStreamEvent>;

export interface ChatModelProvider {
  /**
   * The body's fields this provider has no equivalent for and leaves out, as the vendor's own
   * SDKs treat them (hints such as `seed`): the request log names them, so nothing is lost in
   * silence. Absent when the provider takes every field it is given.
   */
  hintsDropped?(body: JsonObject, extensions?: CallExtensions, upstreamModel?: string): string[];
  /**
   * The prompt tokens the vendor will count for a call, made locally, for a vendor that reports
   * usage only at a stream's end; null when it cannot tell (another tokenizer, not loaded yet).
   * Absent for vendors that report the prompt's count with their first event.
   */
  countPromptTokens?(call: Pick<ChatCall, 'body' | 'upstreamModel'>): number | null;
  complete(call: ChatCall): Promise<ChatCompletionResult>;
  /**
   * Starts a stream and resolves once the provider's first frame arrived, so failures before
   * it reject with a GatewayError and the client still gets a proper status.
   */
  stream(call: ChatCall): Promise<ChatStream>;
  /**
   * The vendor's own count of the call's input tokens, where it has a count endpoint
   * (Anthropic's count_tokens, Gemini's countTokens); absent: the gateway estimates.
   */
  countTokens?(call: ChatCall): Promise<number>;
}

/**
 * A call to a provider's own Responses API (OpenAI's `POST /responses`): the caller's body
 * passed through with every field intact (reasoning items, built-in tools, include, …).
 */
export interface ResponsesCall extends CallContext, PassThroughSource {
  upstreamModel: string;
  /** The Responses request body without `model`, `stream` and `provider`. */
  body: JsonObject;
}

export interface ResponsesResult {
  /** The provider's `response` object; its `model` is the upstream model. */
  response: JsonObject;
  usage: TokenUsage | null;
}

/**
 * One event of a provider's own Responses stream, as it sent it: `json` its text, `eventType`
 * its type. `event` is the parsed object for the events that carry the response (its
 * lifecycle: created, in progress, completed, …); null for the others (items, deltas), which
 * the gateway hands on unread.
 */
export interface ResponseEventReceived {
  type: 'response-event-received';
  eventType: string;
  event: JsonObject | null;
  json: string;
}

/** A provider's own Responses stream: its events, with `usage-reported` from the final response. */
export type ResponsesStream = EventStream<StreamEvent<ResponseEventReceived>>;

/**
 * A provider that serves the Responses API itself, so a Responses request for its models goes
 * there untranslated. Its stream ends after `response.completed`, `response.incomplete` or
 * `response.failed`.
 */
export interface ResponsesModelProvider {
  create(call: ResponsesCall): Promise<ResponsesResult>;
  /** Starts a stream and resolves once the provider's first event arrived (see ChatModelProvider.stream). */
  stream(call: ResponsesCall): Promise<ResponsesStream>;
  /** The provider's count of the request's input tokens (`POST /responses/input_tokens`). */
  countInputTokens(call: ResponsesCall): Promise<number>;
  /** The provider's compaction of the conversation (`POST /responses/compact`): its `response.compaction` object. */
  compact(call: ResponsesCall): Promise<ResponsesResult>;
}

/**
 * A call in Anthropic's Messages shape, for a provider that speaks it natively: `body` is the
 * caller's Messages request (`sourceJson` its bytes), sent with only `model` replaced, so
 * fields the gateway does not read (`cache_control`, thinking blocks and their signatures,
 * `context_management`) arrive unchanged.
 */
export interface MessagesCall extends CallContext, PassThroughSource {
  upstreamModel: string;
  /** The caller's `anthropic-version` and `anthropic-beta` headers, forwarded when given. */
  version?: string | undefined;
  beta?: string | undefined;
}

export interface MessagesResult {
  /** The Messages API's message object; its `model` is the upstream model. */
  message: JsonObject;
  usage: TokenUsage | null;
}

/**
 * One event of a native Messages stream as the provider sent it: its `event:` name, its
 * `data:` text and that text parsed (message_start … message_stop, ping).
 */
export interface MessagesEventReceived {
  type: 'messages-event-received';
  event: string;
  data: string;
  value: JsonObject;
}

export type MessagesStreamEvent = StreamEvent<MessagesEventReceived>;

export interface MessagesProvider {
  /**
   * Whether the provider speaks the Messages API for this model (a cloud that serves Claude and
   * other families: only Claude); absent means every model. A model it does not is translated.
   */
  servesModel?(upstreamModel: string): boolean;
  create(call: MessagesCall): Promise<MessagesResult>;
  /** Resolves once the first event arrived (as ChatModelProvider.stream). */
  stream(call: MessagesCall): Promise<EventStream<MessagesStreamEvent>>;
  /** The provider's own count of the request's input tokens (`POST /v1/messages/count_tokens`). */
  countTokens(call: MessagesCall): Promise<number>;
}

/**
 * A call in the Gemini API's shape, for a provider that speaks it natively: `body` is the
 * caller's generateContent (or countTokens) request, `sourceJson` its bytes, sent as they are
 * (the model is in the path, not the body), so fields the gateway does not read reach it.
 */
export interface GenerateContentCall extends CallContext, PassThroughSource {
  upstreamModel: string;
}

export interface GenerateContentResult {
  /** The provider's GenerateContentResponse. */
  response: JsonObject;
  usage: TokenUsage | null;
}

/** One GenerateContentResponse of a native stream: its text as the provider sent it, and parsed. */
export interface ContentFrameReceived {
  type: 'content-frame-received';
  data: string;
  value: JsonObject;
}

export type ContentStreamEvent = StreamEvent<ContentFrameReceived>;

/** A provider that speaks the Gemini API itself (generateContent, streamGenerateContent, countTokens). */
export interface GenerateContentProvider {
  /** Whether it speaks the API for this model; absent means every model. */
  servesModel?(upstreamModel: string): boolean;
  generate(call: GenerateContentCall): Promise<GenerateContentResult>;
  /** Resolves once the first response arrived (as ChatModelProvider.stream). */
  stream(call: GenerateContentCall): Promise<EventStream<ContentStreamEvent>>;
  /** The provider's own countTokens answer (`totalTokens`, …) for the request. */
  countTokens(call: GenerateContentCall): Promise<JsonObject>;
}

export interface EmbeddingCall extends CallContext, PassThroughSource {
  upstreamModel: string;
  /** OpenAI embeddings body without `model`: `input`, `dimensions`, `encoding_format`, … */
  body: JsonObject;
}

/** The embeddings of a response as the request log keeps them: not the vectors, how many and how long. */
export interface EmbeddingVectors {
  count: number;
  /** The first embedding's length when it is an array of floats; null otherwise (base64, or no embedding). */
  dimensions: number | null;
}

export interface EmbeddingResult {
  /**
   * OpenAI embeddings response (`object: list`, `data`, `model`, `usage`). With
   * `responseJson` it is that response without `data`: the bytes carry the vectors, and the
   * adapter need not read thousands of floats into numbers.
   */
  response: JsonObject;
  /**
   * The provider's response bytes, when its answer is already in OpenAI's shape: sent on
   * with only `model` rewritten, so thousands of floats are not serialised again (nor their
   * digits changed). Absent when the adapter built the response itself.
   */
  responseJson?: Buffer;
  vectors: EmbeddingVectors;
  usage: TokenUsage | null;
}

export interface EmbeddingProvider {
  embed(call: EmbeddingCall): Promise<EmbeddingResult>;
}

export interface ImageCall extends CallContext {
  upstreamModel: string;
  /** OpenAI images body without `model`: `prompt`, `n`, `size`, `response_format`, … */
  body: JsonObject;
}

export interface ImageResult {
  /** OpenAI images response (`created`, `data[]` with `b64_json` or `url`). */
  response: JsonObject;
  imageCount: number;
  usage: TokenUsage | null;
}

export interface ImageProvider {
  generate(call: ImageCall): Promise<ImageResult>;
}

export interface SpeechCall extends CallContext {
  upstreamModel: string;
  /** OpenAI speech body without `model`: `input`, `voice`, `response_format`, `speed`, … */
  body: JsonObject;
}

export interface SpeechResult {
  audio: Buffer;
  contentType: string;
}

export interface SpeechProvider {
  speak(call: SpeechCall): Promise<SpeechResult>;
}

export interface TranscriptionCall extends CallContext {
  upstreamModel: string;
  file: { data: Buffer; filename: string; contentType: string };
  /**
   * Other form fields, forwarded as they came (language, prompt, response_format, …); a
   * field sent several times (`timestamp_granularities[]`) has all its values, in order.
   */
  fields: Record<string, string | string[]>;
}

export interface TranscriptionResult {
  /** Body to return and its content type (JSON for json formats, text otherwise). */
  body: Buffer;
  contentType: string;
  /** Audio duration when the provider reports it. */
  durationSeconds: number | null;
  usage: TokenUsage | null;
}

export interface TranscriptionProvider {
  transcribe(call: TranscriptionCall): Promise<TranscriptionResult>;
}

/** One configured provider: a name and the capabilities it serves. */
/** A text to classify with the provider's moderation model (a guardrail's `moderation` check). */
export interface ModerationCall extends CallContext {
  /** The provider's moderation model; absent: the provider's default. */
  upstreamModel?: string;
  input: string;
}

/** The provider's verdict on one text: flagged or not, and each category's flag and score (0 to 1). */
export interface ModerationResult {
  flagged: boolean;
  categories: Record<string, boolean>;
  scores: Record<string, number>;
}

/** A provider's own moderation endpoint: a classifier, not a chat model. */
export interface ModerationProvider {
  moderate(call: ModerationCall): Promise<ModerationResult>;
}

export interface Provider {
  readonly name: string;
  /** Whether a remote (http/https) image URL can be passed to its chat models. */
  readonly acceptsRemoteImageUrls: boolean;
  readonly chat?: ChatModelProvider;
  /** The provider's own Responses API, for its chat models (absent: Responses requests are translated to chat). */
  readonly responses?: ResponsesModelProvider;
  /** Anthropic's Messages API spoken natively (a pass-through for callers of that API). */
  readonly messages?: MessagesProvider;
  /** The Gemini API spoken natively (a pass-through for callers of that API). */
  readonly geminiApi?: GenerateContentProvider;
  readonly embeddings?: EmbeddingProvider;
  readonly images?: ImageProvider;
  readonly speech?: SpeechProvider;
  readonly transcription?: TranscriptionProvider;
  /** A moderation endpoint (absent for most providers). */
  readonly moderation?: ModerationProvider;
}
