import type { ProjectKeyring } from '../crypto/index.js';
import type { JsonObject } from '../model-api/index.js';
import { contentText, lightweightVerificationPrompt, reviewMaterial } from './prompts.js';
import { attemptsAllowed, openField } from './request-fields.js';
import type { ChatMessageInput, LightweightVettingRequest } from './request-schema.js';
import { attemptViews } from './full.js';
import type { LightweightVettingReply } from './response-schema.js';
import type { LoopOutcome } from './types.js';

/** What the loop needs for one POST /v1/chat/vetting, derived from its body. */
export interface LightweightPlan {
  draftBody: JsonObject & { messages: JsonObject[] };
  verificationMessages(draft: string): JsonObject[];
  maxAttempts: number;
  /** The body as logged: Rule 3 fields decrypted (docs/vetting.md). */
  loggedRequest: LightweightVettingRequest;
  /** Longest reply of one draft, for the limiter's estimate. */
  maxTokens: number | undefined;
}

export interface LightweightOptions {
  /** The caller's project's: a value sealed for another project does not open. */
  keyring: ProjectKeyring;
  /** Instructions of the verification prompt (config vetting.verificationSystemPrompt or the default). */
  verifierInstructions: string;
  maxAttemptsLimit: number;
}

function openSystemMessage(keyring: ProjectKeyring, message: ChatMessageInput, index: number): ChatMessageInput {
  if (message.role !== 'system') return message;
  if (typeof message.content === 'string') {
    return { ...message, content: openField(keyring, message.content, `messages[${index}].content`) };
  }
  return {
    ...message,
    content: message.content.map((part, partIndex) =>
      part.type === 'text' ? { ...part, text: openField(keyring, part.text, `messages[${index}].content[${partIndex}].text`) } : part,
    ),
  };
}

export function planLightweight(body: LightweightVettingRequest, options: LightweightOptions): LightweightPlan {
  const { keyring } = options;
  const messages = body.messages.map((message, index) => openSystemMessage(keyring, message, index));
  const vettingConfig = body.vettingConfig ?? {};
  const systemPrompt =
    vettingConfig.systemPrompt === undefined ? undefined : openField(keyring, vettingConfig.systemPrompt, 'vettingConfig.systemPrompt');
  const maxAttempts = attemptsAllowed(vettingConfig.maxAttempts, 'vettingConfig.maxAttempts', options.maxAttemptsLimit);
  const isInstruction = (message: ChatMessageInput) => message.role === 'system' || message.role === 'developer';
  const verificationPrompt = lightweightVerificationPrompt({
    instructions: options.verifierInstructions,
    systemPrompt,
    guideline: vettingConfig.guideline,
    callerInstructions: messages.filter(isInstruction).map((message) => contentText(message.content)),
  });
  const conversation = messages.filter((message) => !isInstruction(message));
  const draftBody: JsonObject & { messages: JsonObject[] } = {
    messages,
    ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
    ...(body.max_tokens !== undefined ? { max_tokens: body.max_tokens } : {}),
    ...(body.top_p !== undefined ? { top_p: body.top_p } : {}),
  };
  return {
    draftBody,
    verificationMessages: (draft) => [
      { role: 'system', content: verificationPrompt },
      { role: 'user', content: reviewMaterial(conversation, draft) },
    ],
    maxAttempts,
    loggedRequest: {
      ...body,
      messages,
      ...(body.vettingConfig !== undefined ? { vettingConfig: { ...body.vettingConfig, ...(systemPrompt !== undefined ? { systemPrompt } : {}) } } : {}),
    },
    maxTokens: body.max_tokens,
  };
}

/**
 * The chat-completion-shaped reply of POST /v1/chat/vetting; with `withAttempts`, every
 * attempt too (the operator's view in the dashboard's playground).
 */
export function lightweightResponse(outcome: LoopOutcome, meta: { requestId: string; model: string; createdAt: number; withAttempts?: boolean }): LightweightVettingReply {
  const prompt = outcome.chatUsage.promptTokens + outcome.verificationUsage.promptTokens;
  const completion = outcome.chatUsage.completionTokens + outcome.verificationUsage.completionTokens;
  return {
    id: `chatcmpl-${meta.requestId}`,
    object: 'chat.completion',
    created: Math.floor(meta.createdAt / 1000),
    model: meta.model,
    choices: [{ index: 0, message: { role: 'assistant', content: outcome.content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    vetting_info: {
      attemptCount: outcome.chatCalls,
      stopReason: outcome.stopReason,
      lastFailureReason: outcome.lastFailureReason,
      ...(meta.withAttempts === true ? { attempts: attemptViews(outcome.attempts) } : {}),
    },
    safety_signals: { requires_attention: outcome.requiresAttention },
  };
}
