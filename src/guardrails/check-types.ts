import type { ChatCompletionResult, JsonObject } from '../model-api/index.js';
import type { Span } from './pii.js';
import type { GuardrailStage } from './policy.js';

/**
 * A chat call of a catalog model made for a model-based check: through the gateway's own call
 * path, listed (and priced) in the record of the request it checks, not guarded itself.
 */
export type CheckerAsk = (model: string, purpose: string, body: JsonObject, signal: AbortSignal) => Promise<ChatCompletionResult>;

/** What a webhook is told of the call it checks (never the caller's secret). */
export interface CallMetadata {
  requestId: string | null;
  keyId: string | null;
  projectId: string | null;
  /** The catalog id the call resolved to. */
  model: string | null;
  /** The provider capability the call is made through (`chat`, `responses`, …; `mcp` for a tool call). */
  capability: string;
  /** A tool call's tool (`server__tool`). */
  tool?: string;
}

/** Where a stage runs: what an asynchronous check needs besides the texts. */
export interface CheckScope {
  stage: GuardrailStage;
  /** The call's own: once it aborts, a check in flight is abandoned. */
  signal?: AbortSignal | undefined;
  /** Absent outside the call path (the config check at start-up). */
  ask?: CheckerAsk | undefined;
  metadata: CallMetadata;
}

/** A check that finds spans in each text, synchronously and without the network. */
export interface SpanCheck {
  readonly kind: 'spans';
  /** What the check found in `text`; a whole-text check (a JSON schema) gives one span over it all. */
  find(text: string): Span[];
  /** Whether what it finds can be masked (replaced) rather than only blocked or logged. */
  readonly maskable: boolean;
}

/** A check that judges all of a stage's texts at once and asynchronously (a checker model, a webhook): flagged or not. Throws when it could not judge. */
export interface VerdictCheck {
  readonly kind: 'verdict';
  judge(texts: readonly string[], scope: CheckScope, guardrail: string): Promise<boolean>;
  readonly maskable: false;
}

export type TextCheck = SpanCheck | VerdictCheck;
