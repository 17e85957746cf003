import { isGatewayError } from '../errors/index.js';
import type { ChatCompletionResult, JsonObject, TokenUsage } from '../model-api/index.js';
import type { AnswerKeyGuard } from './answer-key.js';
import { LOCAL_CHECK_REASON, feedbackMessage } from './prompts.js';
import type { Attempt, ChatCaller, LoopOutcome, LoopTally, StopReason } from './types.js';
import { addUsage, emptyUsage } from './usage.js';
import { VERDICT_RESPONSE_FORMAT, readVerdict } from './verdict.js';

export interface VettingLoopInput {
  draft: ChatCaller;
  verify: ChatCaller;
  /** OpenAI chat body of the first draft; later drafts append the feedback to its messages. */
  draftBody: JsonObject & { messages: JsonObject[] };
  /** The verifier's messages for one draft (system prompt and review material). */
  verificationMessages(draft: string): JsonObject[];
  maxAttempts: number;
  fallbackMessage: string;
  /** Full VETTING: rejects leaking drafts locally and scrubs failure reasons. */
  answerKey: AnswerKeyGuard | null;
  signal: AbortSignal;
  /** Filled in as the calls answer, so the caller can meter what was used when the loop throws. */
  tally?: LoopTally;
}

export function newLoopTally(): LoopTally {
  return { chatUsage: emptyUsage(), verificationUsage: emptyUsage(), chatCalls: 0, verificationCalls: 0 };
}

/** What one call gave back: text, a provider safety block, or a failure. */
interface Completion {
  /** `blocked`: the provider stopped the reply for safety (finish_reason content_filter). */
  kind: 'text' | 'blocked';
  text: string;
  usage: TokenUsage | null;
}

type CallResult =
  | Completion
  /** `code` is the gateway's error code; provider messages are not repeated, they can quote the prompt. */
  | { kind: 'failed'; code: string };

function firstChoice(result: ChatCompletionResult): JsonObject | undefined {
  const choices = result.completion.choices;
  return Array.isArray(choices) ? (choices[0] as JsonObject | undefined) : undefined;
}

/** Reads a completion: its text, and whether the provider blocked it for safety. */
function classifyCompletion(result: ChatCompletionResult): Completion {
  const choice = firstChoice(result);
  const message = choice?.message as JsonObject | undefined;
  const text = typeof message?.content === 'string' ? message.content : '';
  return { kind: choice?.finish_reason === 'content_filter' ? 'blocked' : 'text', text, usage: result.usage };
}

/**
 * Calls a model and classifies the answer. A failed call is a stop reason, not an HTTP error
 * (docs/vetting.md), except when the client went away, or when a drafting call was refused for
 * the caller's own input (an image the model cannot take, …): that stays the caller's 4xx.
 */
async function callModel(caller: ChatCaller, body: JsonObject, signal: AbortSignal, role: 'draft' | 'verify'): Promise<CallResult> {
  try {
    return classifyCompletion(await caller(body));
  } catch (error) {
    if (signal.aborted) throw error;
    if (role === 'draft' && isGatewayError(error) && error.type === 'invalid_request_error') throw error;
    return { kind: 'failed', code: isGatewayError(error) ? error.code : 'provider_error' };
  }
}

/**
 * The VETTING loop (docs/vetting.md): draft, check, verify, retry with
 * feedback. Fails closed: only a draft the verifier passed is ever returned as the reply.
 */
export async function runVettingLoop(input: VettingLoopInput): Promise<LoopOutcome> {
  const attempts: Attempt[] = [];
  const tally = input.tally ?? newLoopTally();
  let lastFailureReason: string | null = null;
  let messages = input.draftBody.messages;
  // Every reason the caller or the next draft sees is scrubbed of the answer key first.
  const fail = (reason: string): string => {
    const scrubbed = input.answerKey === null ? reason : input.answerKey.redact(reason);
    lastFailureReason = scrubbed;
    return scrubbed;
  };

  const stop = (stopReason: StopReason, content?: string): LoopOutcome => ({
    stopReason,
    content: stopReason === 'VERIFICATION_PASSED' && content !== undefined ? content : input.fallbackMessage,
    attempts,
    lastFailureReason,
    requiresAttention: stopReason === 'SAFETY_TRIGGERED',
    ...tally,
  });

  for (let attemptNumber = 1; attemptNumber <= input.maxAttempts; attemptNumber += 1) {
    tally.chatCalls += 1;
    const drafted = await callModel(input.draft, { ...input.draftBody, messages }, input.signal, 'draft');
    if (drafted.kind === 'failed') {
      fail(`The drafting call failed (${drafted.code}).`);
      return stop('GENERATION_ERROR');
    }
    tally.chatUsage = addUsage(tally.chatUsage, drafted.usage);
    const attempt: Attempt = { draft: drafted.text, verificationPassed: false, verificationOutput: null, requiresAttention: false, checkedBy: null };
    attempts.push(attempt);
    if (drafted.kind === 'blocked') {
      attempt.requiresAttention = true;
      fail('The drafting model’s provider blocked the reply for safety.');
      return stop('SAFETY_TRIGGERED');
    }
    if (drafted.text.trim().length === 0) {
      fail('The drafting model returned an empty reply.');
      return stop('GENERATION_ERROR');
    }

    let rejection: string;
    if (input.answerKey?.leaks(drafted.text) === true) {
      attempt.checkedBy = 'local_check';
      rejection = fail(LOCAL_CHECK_REASON);
    } else {
      tally.verificationCalls += 1;
      attempt.checkedBy = 'verifier';
      const verified = await callModel(
        input.verify,
        { messages: input.verificationMessages(drafted.text), temperature: 0, response_format: VERDICT_RESPONSE_FORMAT },
        input.signal,
        'verify',
      );
      if (verified.kind === 'failed') {
        fail(`The verification call failed (${verified.code}).`);
        return stop('VERIFICATION_ERROR');
      }
      tally.verificationUsage = addUsage(tally.verificationUsage, verified.usage);
      attempt.verificationOutput = verified.text;
      if (verified.kind === 'blocked') {
        attempt.requiresAttention = true;
        fail('The verification model’s provider blocked the review for safety.');
        return stop('SAFETY_TRIGGERED');
      }
      const verdict = readVerdict(verified.text);
      if (verdict === null) {
        fail('The verification model did not return a readable verdict.');
        return stop('VERIFICATION_ERROR');
      }
      attempt.verificationPassed = verdict.passed && !verdict.requires_attention;
      attempt.requiresAttention = verdict.requires_attention;
      if (verdict.requires_attention) {
        fail(verdict.reason.trim() || 'The verifier flagged the conversation for attention.');
        return stop('SAFETY_TRIGGERED');
      }
      if (verdict.passed) return stop('VERIFICATION_PASSED', drafted.text);
      rejection = fail(verdict.reason.trim() || 'The verifier rejected the draft without giving a reason.');
    }
    messages = [...input.draftBody.messages, feedbackMessage(rejection)];
  }
  return stop('MAX_ATTEMPTS_REACHED');
}

export interface ChatOnlyOutcome {
  content: string;
  requiresAttention: boolean;
  chatUsage: TokenUsage;
}

/**
 * The full endpoint's `chat` mode: one draft, no verification. There is no stop reason to
 * report a failure in, so a failed call stays an HTTP error; a safety block still gets the
 * fallback and the attention flag.
 */
export async function runChatOnly(draft: ChatCaller, body: JsonObject, fallbackMessage: string): Promise<ChatOnlyOutcome> {
  const result = classifyCompletion(await draft(body));
  const blocked = result.kind === 'blocked';
  return { content: blocked ? fallbackMessage : result.text, requiresAttention: blocked, chatUsage: addUsage(emptyUsage(), result.usage) };
}
