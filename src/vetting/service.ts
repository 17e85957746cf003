import type { CheckedCall, RequestCall } from '../calls/index.js';
import type { Catalog } from '../catalog/index.js';
import { ConfigError, type GatewayConfig } from '../config/index.js';
import type { Keyring } from '../crypto/index.js';
import { invalidBody, isGatewayError } from '../errors/index.js';
import { projectOf, type Principal } from '../keys/index.js';
import type { Admission } from '../limits/index.js';
import { fullResponse, planFull } from './full.js';
import { lightweightResponse, planLightweight } from './lightweight.js';
import { newLoopTally, runChatOnly, runVettingLoop, type VettingLoopInput } from './loop.js';
import { chatCallerFor } from './models.js';
import { estimateVettingUsage } from './estimate.js';
import { DEFAULT_TUTOR_PROMPT, DEFAULT_VERIFIER_INSTRUCTIONS } from './prompts.js';
import type { FullVettingRequest, LightweightVettingRequest } from './request-schema.js';
import type { FullVettingReply, LightweightVettingReply } from './response-schema.js';
import type { LoopTally, StopReason } from './types.js';

/** A VETTING request as the service runs it: its call through the model-call path, the caller, and the client's signal. */
export interface VettingRun {
  call: RequestCall;
  principal: Principal;
  /** Fires when the client went away: no further draft or verification is made. */
  signal: AbortSignal;
}

/** A reply, and the rate-limit headers of the request's admission. */
export interface VettingAnswer<R> {
  reply: R;
  admission: Admission;
}

/** A configured default model must be a chat model of the catalog: checked at start-up, not on the first request. */
function checkConfiguredModel(catalog: Pick<Catalog, 'resolve'>, id: string | undefined, setting: string): void {
  if (id === undefined) return;
  try {
    catalog.resolve(id, { mode: 'chat', param: setting });
  } catch (error) {
    if (isGatewayError(error)) throw new ConfigError(`invalid setting ${setting}: "${id}" is not a chat model of the catalog`);
    throw error;
  }
}

function rejectStreaming(stream: boolean | undefined): void {
  if (stream === true) throw invalidBody('VETTING replies are never streamed; remove stream or set it to false.', 'stream');
}

/**
 * VETTING (docs/vetting.md): drafts with a model, verifies each draft with another and redrafts
 * until one passes, failing closed. Every draft and verification is a model call of the
 * request's one call (src/calls): reserved once for the whole loop, each priced by its own
 * model in the request's record. Built once at start-up, which checks the configured models.
 */
export class VettingService {
  private readonly verifierInstructions: string;
  private readonly internalVerificationModel: string;

  constructor(
    private readonly settings: GatewayConfig['vetting'],
    private readonly catalog: Pick<Catalog, 'resolve' | 'defaultChatModel'>,
    private readonly keyring: Keyring,
  ) {
    checkConfiguredModel(catalog, settings.defaultModel, 'vetting.defaultModel');
    checkConfiguredModel(catalog, settings.verificationModel, 'vetting.verificationModel');
    this.verifierInstructions = settings.verificationSystemPrompt ?? DEFAULT_VERIFIER_INSTRUCTIONS;
    this.internalVerificationModel = settings.verificationModel ?? catalog.defaultChatModel;
  }

  /** POST /v1/chat/vetting: the caller's model drafts, the internal verification model verifies. */
  async lightweight(run: VettingRun, body: LightweightVettingRequest, options: { withAttempts: boolean }): Promise<VettingAnswer<LightweightVettingReply>> {
    const { call } = run;
    call.describe({ mode: 'vetting', payload: body });
    rejectStreaming(body.stream);
    const requested = body.model ?? this.settings.defaultModel ?? this.catalog.defaultChatModel;
    const draft = call.check({ mode: 'chat', capability: 'chat', model: requested, param: 'model', providerHint: body.provider, allowedFor: run.principal, messages: body.messages, purpose: 'draft' });
    const verification = call.subcall({ mode: 'chat', capability: 'chat', model: this.internalVerificationModel, param: 'vetting.verificationModel', purpose: 'verification', guarded: false });
    const plan = planLightweight(body, { keyring: this.keyring.forProject(projectOf(run.principal)), verifierInstructions: this.verifierInstructions, maxAttemptsLimit: this.settings.maxAttemptsLimit });
    call.logRequestAs(plan.loggedRequest);
    const admission = await this.admit(run, [draft, verification], plan, plan.maxAttempts);
    const outcome = await this.vet(run, { draft, verification }, { ...plan, answerKey: null });
    const reply = lightweightResponse(outcome, { requestId: call.requestId, model: draft.target.resolved.id, createdAt: call.startedAt, withAttempts: options.withAttempts });
    call.answered({ payload: reply });
    return { reply, admission };
  }

  /** POST /v1/vetting/full: answer-key VETTING, or one draft in `chat` mode. */
  async full(run: VettingRun, body: FullVettingRequest): Promise<VettingAnswer<FullVettingReply>> {
    const { call } = run;
    call.describe({ mode: 'vetting', payload: body });
    rejectStreaming(body.stream);
    const draft = call.check({
      mode: 'chat',
      capability: 'chat',
      model: body.config.chatModel.modelId,
      param: 'config.chatModel.modelId',
      allowedFor: run.principal,
      messages: body.messages,
      purpose: 'draft',
    });
    const draftModel = draft.target.resolved;
    const plan = planFull(body, {
      keyring: this.keyring.forProject(projectOf(run.principal)),
      defaultChatPrompt: this.settings.chatSystemPrompt ?? DEFAULT_TUTOR_PROMPT,
      verifierInstructions: this.verifierInstructions,
      maxAttemptsLimit: this.settings.maxAttemptsLimit,
    });
    call.logRequestAs(plan.loggedRequest);
    const meta = { mode: plan.mode, startedAt: call.startedAt, body };

    if (plan.mode === 'chat') {
      const admission = await this.admit(run, [draft], plan, 1);
      const outcome = await runChatOnly(chatCallerFor(draft, { signal: run.signal, requestId: call.requestId }), plan.draftBody, this.settings.fallbackMessage);
      call.note({ vettingMode: 'chat', chatModel: draftModel.id });
      const reply = fullResponse({ ...outcome, verificationUsage: null, verification: null }, meta);
      call.answered({ payload: reply });
      return { reply, admission };
    }

    const verification = call.subcall({ mode: 'chat', capability: 'chat', model: plan.verificationModelId, param: 'config.verificationModel.modelId', allowedFor: run.principal, purpose: 'verification', guarded: false });
    const admission = await this.admit(run, [draft, verification], plan, plan.maxAttempts);
    const outcome = await this.vet(run, { draft, verification }, plan);
    const reply = fullResponse(
      {
        content: outcome.content,
        requiresAttention: outcome.requiresAttention,
        chatUsage: outcome.chatUsage,
        verificationUsage: outcome.verificationUsage,
        verification: { stopReason: outcome.stopReason, attemptCount: outcome.chatCalls, attempts: outcome.attempts, lastFailureReason: outcome.lastFailureReason },
      },
      meta,
    );
    call.answered({ payload: reply });
    return { reply, admission };
  }

  /** Reserves the loop's estimated usage once, before the first provider call (settled when the request finishes). */
  private admit(run: VettingRun, calls: readonly CheckedCall<'chat'>[], plan: { draftBody: { messages: unknown[] }; maxTokens: number | undefined }, attempts: number): Promise<Admission> {
    const estimate = estimateVettingUsage({
      promptCharacters: JSON.stringify(plan.draftBody.messages).length,
      maxTokens: plan.maxTokens,
      attempts,
      pricing: calls.map((call) => call.pricing),
    });
    return run.call.reserve(run.principal, estimate);
  }

  /** Drafts and verifies until a draft passes or the attempts run out; the record notes who drafted, who verified and how it ended. */
  private async vet(
    run: VettingRun,
    calls: { draft: CheckedCall<'chat'>; verification: CheckedCall<'chat'> },
    plan: Pick<VettingLoopInput, 'draftBody' | 'verificationMessages' | 'maxAttempts' | 'answerKey'>,
  ) {
    const context = { signal: run.signal, requestId: run.call.requestId };
    const tally = newLoopTally();
    const models = { draft: calls.draft.target.resolved, verification: calls.verification.target.resolved };
    const noteOutcome = (stopReason: StopReason | null, counts: LoopTally) =>
      run.call.note({
        vettingMode: 'vetting',
        chatModel: models.draft.id,
        verificationModel: models.verification.id,
        verificationProvider: models.verification.model.provider,
        stopReason,
        attemptCount: counts.chatCalls,
        verificationCalls: counts.verificationCalls,
        chatUsage: counts.chatUsage,
        verificationUsage: counts.verificationUsage,
      });
    try {
      const outcome = await runVettingLoop({
        draft: chatCallerFor(calls.draft, context),
        verify: chatCallerFor(calls.verification, context),
        draftBody: plan.draftBody,
        verificationMessages: plan.verificationMessages,
        maxAttempts: plan.maxAttempts,
        fallbackMessage: this.settings.fallbackMessage,
        answerKey: plan.answerKey,
        signal: run.signal,
        tally,
      });
      noteOutcome(outcome.stopReason, outcome);
      return outcome;
    } catch (error) {
      // A later draft refused for the caller's input (a 4xx): the calls before it are still in the record.
      noteOutcome(null, tally);
      throw error;
    }
  }
}
