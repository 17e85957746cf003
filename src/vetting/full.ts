import type { ProjectKeyring } from '../crypto/index.js';
import { invalidBody } from '../errors/index.js';
import type { JsonObject, TokenUsage } from '../model-api/index.js';
import { AnswerKeyGuard } from './answer-key.js';
import { draftingPrompt, fullVerificationPrompt, reviewMaterial, type ProtectedItem, type QuestionContext } from './prompts.js';
import { attemptsAllowed, openField } from './request-fields.js';
import type { FullVettingRequest } from './request-schema.js';
import type { AttemptView, FullVettingReply } from './response-schema.js';
import type { Attempt, StopReason } from './types.js';

export interface FullOptions {
  /** The caller's project's: a value sealed for another project does not open. */
  keyring: ProjectKeyring;
  /** Operator defaults (config vetting.*) or the built-in prompts. */
  defaultChatPrompt: string;
  verifierInstructions: string;
  maxAttemptsLimit: number;
}

interface FullPlanBase {
  draftBody: JsonObject & { messages: JsonObject[] };
  /** The body as logged: Rule 3 fields decrypted (docs/vetting.md). */
  loggedRequest: FullVettingRequest;
  maxTokens: number | undefined;
}

/** What one POST /v1/vetting/full needs, by mode. */
export type FullPlan =
  | (FullPlanBase & { mode: 'chat' })
  | (FullPlanBase & {
      mode: 'vetting';
      verificationModelId: string;
      verificationMessages(draft: string): JsonObject[];
      maxAttempts: number;
      answerKey: AnswerKeyGuard;
    });

function required<T>(value: T | undefined, field: string, why: string): T {
  if (value === undefined) throw invalidBody(`${field} is required ${why}.`, field);
  return value;
}

const IN_VETTING_MODE = 'when mode is "vetting"';

/** context.items as protected items; every question and correct answer must be there in vetting mode. */
function protectedItems(body: FullVettingRequest): ProtectedItem[] {
  const items = required(body.context?.items, 'context.items', IN_VETTING_MODE);
  if (items.length === 0) throw invalidBody(`context.items must hold at least one item ${IN_VETTING_MODE}.`, 'context.items');
  return items.map((item, index) => ({
    id: item.question?.id,
    subject: item.question?.subject,
    question: required(item.question?.text, `context.items[${index}].question.text`, IN_VETTING_MODE),
    correctAnswer: required(item.answerKey?.correctAnswer, `context.items[${index}].answerKey.correctAnswer`, IN_VETTING_MODE),
    keyConcepts: item.answerKey?.keyConcepts ?? [],
  }));
}

function questions(body: FullVettingRequest): QuestionContext[] {
  return (body.context?.items ?? []).flatMap((item) =>
    item.question?.text === undefined ? [] : [{ id: item.question.id, subject: item.question.subject, question: item.question.text }],
  );
}

/** System-level behaviour belongs in `prompts`; the conversation ends with the student's message. */
function checkConversation(body: FullVettingRequest): void {
  body.messages.forEach((message, index) => {
    if (message.role === 'system' || message.role === 'developer') {
      throw invalidBody(`messages[${index}].role is "${message.role}"; put system-level instructions in prompts.chatSystemPrompt instead.`, `messages[${index}].role`);
    }
  });
  const last = body.messages[body.messages.length - 1];
  if (last?.role !== 'user') {
    throw invalidBody('messages must end with the student’s latest message (role "user").', `messages[${body.messages.length - 1}].role`);
  }
}

export function planFull(body: FullVettingRequest, options: FullOptions): FullPlan {
  const { keyring } = options;
  checkConversation(body);
  const chatPrompt =
    body.prompts.chatSystemPrompt === undefined
      ? options.defaultChatPrompt
      : openField(keyring, body.prompts.chatSystemPrompt, 'prompts.chatSystemPrompt');
  const customVerification =
    body.prompts.verificationSystemPrompt === undefined
      ? undefined
      : openField(keyring, body.prompts.verificationSystemPrompt, 'prompts.verificationSystemPrompt');
  const { chatModel } = body.config;
  const base: FullPlanBase = {
    draftBody: {
      messages: [{ role: 'system', content: draftingPrompt(chatPrompt, questions(body)) }, ...body.messages],
      ...(chatModel.temperature !== undefined ? { temperature: chatModel.temperature } : {}),
      ...(chatModel.maxTokens !== undefined ? { max_tokens: chatModel.maxTokens } : {}),
      ...(chatModel.topP !== undefined ? { top_p: chatModel.topP } : {}),
    },
    loggedRequest: {
      ...body,
      prompts: {
        ...body.prompts,
        ...(body.prompts.chatSystemPrompt !== undefined ? { chatSystemPrompt: chatPrompt } : {}),
        ...(customVerification !== undefined ? { verificationSystemPrompt: customVerification } : {}),
      },
    },
    maxTokens: chatModel.maxTokens,
  };
  if (body.mode === 'chat') return { ...base, mode: 'chat' };

  const verificationModelId = required(body.config.verificationModel?.modelId, 'config.verificationModel.modelId', IN_VETTING_MODE);
  const items = protectedItems(body);
  const verificationPrompt = fullVerificationPrompt({
    custom: customVerification,
    defaultInstructions: options.verifierInstructions,
    chatPrompt,
    items,
  });
  return {
    ...base,
    mode: 'vetting',
    verificationModelId,
    verificationMessages: (draft) => [
      { role: 'system', content: verificationPrompt },
      { role: 'user', content: reviewMaterial(body.messages, draft) },
    ],
    maxAttempts: attemptsAllowed(body.config.maxVerificationAttempts, 'config.maxVerificationAttempts', options.maxAttemptsLimit),
    answerKey: new AnswerKeyGuard(items.flatMap((item) => [item.correctAnswer, ...item.keyConcepts])),
  };
}

export interface FullResult {
  content: string;
  requiresAttention: boolean;
  chatUsage: TokenUsage;
  verificationUsage: TokenUsage | null;
  /** null in chat mode. */
  verification: {
    stopReason: StopReason;
    attemptCount: number;
    attempts: readonly Attempt[];
    lastFailureReason: string | null;
  } | null;
}

export interface FullMeta {
  mode: 'vetting' | 'chat';
  startedAt: number;
  body: FullVettingRequest;
}

const tokensOf = (usage: TokenUsage | null) => (usage === null ? 0 : usage.promptTokens + usage.completionTokens);

/** A loop's attempts as the answers show them (drafts included: for an audit trail, never for the student). */
export function attemptViews(attempts: readonly Attempt[]): AttemptView[] {
  return attempts.map((attempt) => ({
    chatResponse: attempt.draft,
    verificationPassed: attempt.verificationPassed,
    verificationOutput: attempt.verificationOutput,
    requiresAttention: attempt.requiresAttention,
    checkedBy: attempt.checkedBy,
  }));
}

/** The response of POST /v1/vetting/full. */
export function fullResponse(result: FullResult, meta: FullMeta): FullVettingReply {
  const chatTokens = tokensOf(result.chatUsage);
  const verificationTokens = tokensOf(result.verificationUsage);
  const { verification } = result;
  return {
    status: 'success',
    mode: meta.mode,
    result: { role: 'assistant', content: result.content },
    verification:
      verification === null
        ? null
        : {
            passed: verification.stopReason === 'VERIFICATION_PASSED',
            attemptCount: verification.attemptCount,
            stopReason: verification.stopReason,
            lastFailureReason: verification.lastFailureReason,
            attempts: attemptViews(verification.attempts),
          },
    usage: { chatTokens, verificationTokens, totalTokens: chatTokens + verificationTokens },
    metadata: {
      processingTimeMs: Date.now() - meta.startedAt,
      timestamp: new Date().toISOString(),
      sessionId: meta.body.context?.sessionId ?? null,
      userId: meta.body.context?.userId ?? null,
      chatModelUsed: meta.body.config.chatModel.modelId,
      verificationModelUsed: meta.mode === 'chat' ? null : (meta.body.config.verificationModel?.modelId ?? null),
    },
    safety_signals: { requires_attention: result.requiresAttention },
  };
}
