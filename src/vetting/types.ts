import type { ChatCompletionResult, JsonObject, TokenUsage } from '../model-api/index.js';

/** Why the VETTING loop stopped (docs/vetting.md). */
export type StopReason =
  | 'VERIFICATION_PASSED'
  | 'MAX_ATTEMPTS_REACHED'
  | 'GENERATION_ERROR'
  | 'VERIFICATION_ERROR'
  | 'SAFETY_TRIGGERED';

/** One provider chat call with the OpenAI-shaped body; the loop knows nothing else of providers. */
export type ChatCaller = (body: JsonObject) => Promise<ChatCompletionResult>;

/** The verification model's structured output (docs/vetting.md). */
export interface Verdict {
  passed: boolean;
  reason: string;
  requires_attention: boolean;
}

/** Who judged an attempt: the verification model, or the local answer-key check before it. */
export type AttemptCheck = 'verifier' | 'local_check';

export interface Attempt {
  /** The drafted reply ('' when the provider blocked it). */
  draft: string;
  verificationPassed: boolean;
  /** The verifier's raw text; null when no verification call answered. */
  verificationOutput: string | null;
  requiresAttention: boolean;
  checkedBy: AttemptCheck | null;
}

/** What the loop's calls used so far; readable after the loop threw too (metering, the log). */
export interface LoopTally {
  chatUsage: TokenUsage;
  verificationUsage: TokenUsage;
  chatCalls: number;
  verificationCalls: number;
}

export interface LoopOutcome extends LoopTally {
  stopReason: StopReason;
  /** The reply to send: the verified draft, or the fallback message (fail closed). */
  content: string;
  attempts: Attempt[];
  lastFailureReason: string | null;
  requiresAttention: boolean;
}
