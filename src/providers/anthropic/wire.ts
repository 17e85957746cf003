import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

/*
 * Anthropic Messages API wire format (POST /v1/messages, anthropic-version 2023-06-01).
 * Requests are our own typed objects; responses are checked against lenient schemas that
 * accept extra and missing optional fields, so a new upstream field never breaks a call.
 */

export const ANTHROPIC_VERSION = '2023-06-01';

// ---- request ----

export type AnthropicImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string };

export type AnthropicDocumentSource =
  | { type: 'base64'; media_type: 'application/pdf'; data: string }
  | { type: 'text'; media_type: 'text/plain'; data: string };

export type AnthropicTextBlock = { type: 'text'; text: string };

export type AnthropicRequestBlock =
  | AnthropicTextBlock
  | { type: 'image'; source: AnthropicImageSource }
  | { type: 'document'; source: AnthropicDocumentSource }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string | AnthropicTextBlock[]; is_error?: boolean };

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicRequestBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: unknown;
  /** Strict tool use: the input is constrained to `input_schema` (Anthropic's structured outputs). */
  strict?: boolean;
}

/** Anthropic's server-side web search tool (its web search tool page). */
export interface AnthropicWebSearchTool {
  type: 'web_search_20250305';
  name: 'web_search';
  max_uses?: number;
  allowed_domains?: string[];
  blocked_domains?: string[];
}

export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string;
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  top_k?: number;
  tools?: (AnthropicTool | AnthropicWebSearchTool)[];
  tool_choice?: AnthropicToolChoice;
  thinking?: { type: 'enabled'; budget_tokens: number };
  metadata?: { user_id: string };
  stream?: boolean;
}

// ---- responses (lenient) ----

const OptionalCount = Type.Optional(Type.Union([Type.Number(), Type.Null()]));

const UsageSchema = Type.Object({
  input_tokens: OptionalCount,
  output_tokens: OptionalCount,
  cache_read_input_tokens: OptionalCount,
  cache_creation_input_tokens: OptionalCount,
  /** The cache writes by entry lifetime (their sum is cache_creation_input_tokens). */
  cache_creation: Type.Optional(
    Type.Union([Type.Object({ ephemeral_5m_input_tokens: OptionalCount, ephemeral_1h_input_tokens: OptionalCount }), Type.Null()]),
  ),
});

/** Any content block; fields are read by `type` (text, tool_use; others are skipped). */
const ContentBlockSchema = Type.Object({
  type: Type.String(),
  text: Type.Optional(Type.String()),
  thinking: Type.Optional(Type.String()),
  signature: Type.Optional(Type.String()),
  id: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  input: Type.Optional(Type.Unknown()),
});

const MessageSchema = Type.Object({
  id: Type.String(),
  model: Type.String(),
  content: Type.Array(ContentBlockSchema),
  stop_reason: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  usage: Type.Optional(UsageSchema),
});

const ErrorObjectSchema = Type.Object({ type: Type.String(), message: Type.String() });

/** `{"type":"error","error":{"type","message"},"request_id"}`: HTTP error bodies and `event: error` frames. */
export const ErrorBodySchema = Type.Object({ type: Type.Literal('error'), error: ErrorObjectSchema });

export const StreamEventSchemas = {
  message_start: Type.Object({ type: Type.Literal('message_start'), message: MessageSchema }),
  content_block_start: Type.Object({ type: Type.Literal('content_block_start'), index: Type.Number(), content_block: ContentBlockSchema }),
  content_block_delta: Type.Object({
    type: Type.Literal('content_block_delta'),
    index: Type.Number(),
    delta: Type.Object({
      type: Type.String(),
      text: Type.Optional(Type.String()),
      partial_json: Type.Optional(Type.String()),
      thinking: Type.Optional(Type.String()),
      signature: Type.Optional(Type.String()),
    }),
  }),
  content_block_stop: Type.Object({ type: Type.Literal('content_block_stop'), index: Type.Number() }),
  message_delta: Type.Object({
    type: Type.Literal('message_delta'),
    delta: Type.Object({ stop_reason: Type.Optional(Type.Union([Type.String(), Type.Null()])) }),
    usage: Type.Optional(UsageSchema),
  }),
  message_stop: Type.Object({ type: Type.Literal('message_stop') }),
  ping: Type.Object({ type: Type.Literal('ping') }),
  error: ErrorBodySchema,
};

export type AnthropicUsage = Static<typeof UsageSchema>;
export type AnthropicContentBlock = Static<typeof ContentBlockSchema>;
export type AnthropicResponse = Static<typeof MessageSchema>;
export type AnthropicErrorBody = Static<typeof ErrorBodySchema>;
export type AnthropicStreamEvent = { [K in keyof typeof StreamEventSchemas]: Static<(typeof StreamEventSchemas)[K]> }[keyof typeof StreamEventSchemas];

/** A compiled check: the value narrowed to the schema's type, or null when it does not fit. */
function checker<T extends TSchema>(schema: T): (value: unknown) => Static<T> | null {
  const compiled = TypeCompiler.Compile(schema);
  return (value) => (compiled.Check(value) ? value : null);
}

export const parseResponse = checker(MessageSchema);
export const parseErrorBody = checker(ErrorBodySchema);

const streamEventCheckers = new Map(Object.entries(StreamEventSchemas).map(([type, schema]) => [type, checker(schema as TSchema)]));

export type StreamEventParse = { kind: 'event'; event: AnthropicStreamEvent } | { kind: 'unknown' } | { kind: 'malformed' };

/**
 * Reads one stream frame's JSON. Event types Anthropic may add later are `unknown` (skipped,
 * as its docs ask); a known type with the wrong shape is `malformed`.
 */
export function parseStreamEvent(value: unknown): StreamEventParse {
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof type !== 'string') return { kind: 'malformed' };
  const check = streamEventCheckers.get(type);
  if (check === undefined) return { kind: 'unknown' };
  const event = check(value) as AnthropicStreamEvent | null;
  return event === null ? { kind: 'malformed' } : { kind: 'event', event };
}
