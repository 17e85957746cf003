import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { GatewayError } from '../../errors/index.js';
import { providerJsonText } from '../shared/provider-json.js';

/**
 * Gemini's native wire format (generativelanguage v1beta). Request types are what the adapter
 * builds; response schemas are lenient (extra fields and missing optional ones are fine) so a
 * new upstream field never breaks a call.
 */

export interface GeminiPart {
  text?: string;
  inlineData?: { mimeType: string; data: string };
  functionCall?: { name: string; args: Record<string, unknown> };
  functionResponse?: { name: string; response: Record<string, unknown> };
  /** Opaque reasoning state Gemini asks to get back with the function call it came with. */
  thoughtSignature?: string;
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

/** Gemini's OpenAPI-subset schema (responseSchema, function parameters). */
export interface GeminiSchema {
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  nullable?: boolean;
  enum?: unknown[];
  items?: GeminiSchema;
  properties?: Record<string, GeminiSchema>;
  required?: string[];
  anyOf?: GeminiSchema[];
  [keyword: string]: unknown;
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: GeminiSchema;
}

/** Gemini's thinking settings: a token budget (2.5 models; -1 lets the model decide) or a level (3 models), and whether thought summaries come back. */
export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  thinkingLevel?: 'low' | 'high';
  includeThoughts?: boolean;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  thinkingConfig?: GeminiThinkingConfig;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseSchema?: GeminiSchema;
}

export interface GenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiPart[] };
  generationConfig?: GeminiGenerationConfig;
  tools?: ({ functionDeclarations: GeminiFunctionDeclaration[] } | { googleSearch: Record<string, never> })[];
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
}

export interface BatchEmbedContentsRequest {
  requests: { model: string; content: { parts: { text: string }[] }; outputDimensionality?: number }[];
}

export interface PredictRequest {
  instances: { prompt: string }[];
  parameters: { sampleCount: number; aspectRatio?: string };
}

const Count = Type.Optional(Type.Number());

const ResponsePart = Type.Object({
  text: Type.Optional(Type.String()),
  thought: Type.Optional(Type.Boolean()),
  thoughtSignature: Type.Optional(Type.String()),
  inlineData: Type.Optional(Type.Object({ mimeType: Type.String(), data: Type.String() })),
  functionCall: Type.Optional(
    Type.Object({
      id: Type.Optional(Type.String()),
      name: Type.String(),
      args: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  ),
});

const UsageMetadata = Type.Object({
  promptTokenCount: Count,
  cachedContentTokenCount: Count,
  candidatesTokenCount: Count,
  toolUsePromptTokenCount: Count,
  thoughtsTokenCount: Count,
  totalTokenCount: Count,
});

/**
 * A candidate's index becomes the caller's choice index, so it must be one a caller can ask
 * for (n ≤ 128; Gemini itself makes at most 8). It also bounds what a stream keeps per index.
 */
const MAX_CANDIDATE_INDEX = 127;

const Candidate = Type.Object({
  index: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_CANDIDATE_INDEX })),
  content: Type.Optional(Type.Object({ parts: Type.Optional(Type.Array(ResponsePart)), role: Type.Optional(Type.String()) })),
  finishReason: Type.Optional(Type.String()),
});

export const GenerateContentResponseSchema = Type.Object({
  candidates: Type.Optional(Type.Array(Candidate)),
  promptFeedback: Type.Optional(Type.Object({ blockReason: Type.Optional(Type.String()) })),
  usageMetadata: Type.Optional(UsageMetadata),
  modelVersion: Type.Optional(Type.String()),
  responseId: Type.Optional(Type.String()),
});

export const BatchEmbedContentsResponseSchema = Type.Object({
  embeddings: Type.Array(Type.Object({ values: Type.Array(Type.Number()) })),
  usageMetadata: Type.Optional(UsageMetadata),
});

export const PredictResponseSchema = Type.Object({
  predictions: Type.Optional(
    Type.Array(
      Type.Object({
        bytesBase64Encoded: Type.Optional(Type.String()),
        mimeType: Type.Optional(Type.String()),
        raiFilteredReason: Type.Optional(Type.String()),
      }),
    ),
  ),
});

export const ErrorBodySchema = Type.Object({
  error: Type.Object({
    code: Type.Optional(Type.Number()),
    message: Type.Optional(Type.String()),
    status: Type.Optional(Type.String()),
    details: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
  }),
});

export type GeminiResponsePart = Static<typeof ResponsePart>;
export type GeminiCandidate = Static<typeof Candidate>;
export type GeminiUsageMetadata = Static<typeof UsageMetadata>;
export type GenerateContentResponse = Static<typeof GenerateContentResponseSchema>;
export type BatchEmbedContentsResponse = Static<typeof BatchEmbedContentsResponseSchema>;
export type PredictResponse = Static<typeof PredictResponseSchema>;
export type GeminiErrorBody = Static<typeof ErrorBodySchema>;

function malformed(provider: string, what: string, body: unknown): GatewayError {
  const text = (typeof body === 'string' ? body : providerJsonText(body)) ?? '(nested too deep to show)';
  return new GatewayError('provider_error', 'The model provider sent a response the gateway could not read. Try again later.', {
    logDetail: { provider, reason: `malformed ${what}`, body: text.slice(0, 500) },
  });
}

/** Parses a response body or stream frame as JSON, or fails with a provider_error. */
export function parseJson(text: string, provider: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw malformed(provider, what, text);
  }
}

/** A compiled check of one response schema: the typed value, or a provider_error. */
function responseChecker<T extends TSchema>(schema: T, what: string): (value: unknown, provider: string) => Static<T> {
  const check = TypeCompiler.Compile(schema);
  return (value, provider) => {
    if (!check.Check(value)) throw malformed(provider, what, value);
    return value;
  };
}

export const checkGenerateContentResponse = responseChecker(GenerateContentResponseSchema, 'generateContent response');
export const checkBatchEmbedContentsResponse = responseChecker(BatchEmbedContentsResponseSchema, 'batchEmbedContents response');
export const checkPredictResponse = responseChecker(PredictResponseSchema, 'predict response');
