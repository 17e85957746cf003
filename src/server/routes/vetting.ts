import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Catalog, ResolvedModel } from '../../catalog/index.js';
import { ConfigError } from '../../config/index.js';
import { Keyring } from '../../crypto/index.js';
import { invalidBody, isGatewayError } from '../../errors/index.js';
import { projectOf } from '../../keys/index.js';
import {
  DEFAULT_TUTOR_PROMPT,
  DEFAULT_VERIFIER_INSTRUCTIONS,
  FullVettingBody,
  FullVettingResponse,
  LightweightVettingBody,
  LightweightVettingResponse,
  addUsage,
  chatCallerFor,
  estimateVettingUsage,
  fullResponse,
  lightweightResponse,
  newLoopTally,
  planFull,
  planLightweight,
  runChatOnly,
  runVettingLoop,
  type LoopOutcome,
  type LoopTally,
  type StopReason,
  type VettingLoopInput,
} from '../../vetting/index.js';
import type { TokenUsage } from '../../model-api/index.js';
import { computeCombinedCost, type CostInput, type RequestRecord } from '../../logs/index.js';
import type { CheckedCall } from '../../calls/index.js';
import type { RouteModule } from '../app.js';
import { admit as admitEstimate, MODEL_ROUTE_SCHEMA } from './model-call.js';
import { isPlaygroundRoute } from '../playground-relay.js';

/** A configured default model must be a chat model of the catalog: checked at start-up, not on the first request. */
function checkConfiguredModel(catalog: Catalog, id: string | undefined, setting: string): void {
  if (id === undefined) return;
  try {
    catalog.resolve(id, { mode: 'chat', param: setting });
  } catch (error) {
    if (isGatewayError(error)) throw new ConfigError(`invalid setting ${setting}: "${id}" is not a chat model of the catalog`);
    throw error;
  }
}

/** Aborts provider calls when the client goes away before its answer was sent. */
function abortSignalOf(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

function rejectStreaming(stream: boolean | undefined): void {
  if (stream === true) throw invalidBody('VETTING replies are never streamed; remove stream or set it to false.', 'stream');
}

/** Schema fields both routes share. */
const VETTING_SCHEMA = { tags: ['vetting'], security: MODEL_ROUTE_SCHEMA.security };

/** Logs the request as VETTING with its body as received (until the plan gives the logged form), and refuses streaming. */
function startRecord(record: RequestRecord, body: { stream?: boolean }): void {
  record.mode = 'vetting';
  record.requestPayload = body;
  rejectStreaming(body.stream);
}

/** POST /v1/chat/vetting and POST /v1/vetting/full (scope model:request). */
export const vettingRoutes: RouteModule = (app, context) => {
  const { catalog, config } = context;
  checkConfiguredModel(catalog, config.vetting.defaultModel, 'vetting.defaultModel');
  checkConfiguredModel(catalog, config.vetting.verificationModel, 'vetting.verificationModel');
  const keyring = new Keyring(context.secrets.encryptionKey, context.secrets.previousEncryptionKeys);
  const verifierInstructions = config.vetting.verificationSystemPrompt ?? DEFAULT_VERIFIER_INSTRUCTIONS;
  const internalVerificationModel = config.vetting.verificationModel ?? catalog.defaultChatModel;

  /** Reserves the request's estimated usage before the first provider call and sets the rate-limit headers (the log hook settles it). */
  const admit = async (
    request: FastifyRequest,
    reply: FastifyReply,
    calls: readonly CheckedCall<'chat'>[],
    plan: { draftBody: { messages: unknown[] }; maxTokens: number | undefined },
    attempts: number,
  ) => {
    const estimate = estimateVettingUsage({
      promptCharacters: JSON.stringify(plan.draftBody.messages).length,
      maxTokens: plan.maxTokens,
      attempts,
      pricing: calls.map((call) => call.target.resolved.model.entry.pricing),
    });
    await admitEstimate(request, reply, context, estimate);
  };

  const callerFor = (request: FastifyRequest, call: CheckedCall<'chat'>, signal: AbortSignal) => chatCallerFor(call, { signal, requestId: request.id });

  /**
   * A VETTING model through the model-call path: chat mode only (a non-chat model is
   * model_mode_mismatch), allowed for the key when the caller chose it, and — for the drafting
   * model — the caller's messages checked by the input policy; the drafting model is logged.
   */
  const checkModel = (
    request: FastifyRequest,
    choice: { model: string; param: string; providerHint?: string | undefined; chosenByCaller: boolean; messages?: readonly unknown[] },
  ): CheckedCall<'chat'> =>
    context.calls.check({
      mode: 'chat',
      capability: 'chat',
      model: choice.model,
      param: choice.param,
      providerHint: choice.providerHint,
      ...(choice.chosenByCaller ? { allowedFor: request.principal } : {}),
      ...(choice.messages !== undefined ? { messages: choice.messages, record: request.record } : {}),
    });

  /** Usage of both sides, and the cost priced per side: drafting and verifying may use models of different prices. */
  const recordOutcome = (
    request: FastifyRequest,
    usage: { chatUsage: TokenUsage; verificationUsage: TokenUsage | null },
    models: { draft: ResolvedModel; verification: ResolvedModel | null },
    extra: Record<string, unknown>,
  ) => {
    request.record.usage = addUsage(usage.chatUsage, usage.verificationUsage);
    const part = (model: ResolvedModel, used: TokenUsage): CostInput => ({
      pricing: model.model.entry.pricing,
      usage: used,
      imageCount: null,
      audioSeconds: null,
      succeeded: true,
    });
    const parts = [part(models.draft, usage.chatUsage)];
    if (models.verification !== null && usage.verificationUsage !== null) parts.push(part(models.verification, usage.verificationUsage));
    request.record.costMicroUsd = computeCombinedCost(parts).microUsd;
    request.record.extra = extra;
  };

  /** Drafts and verifies until a draft passes or the attempts run out, then records usage, cost and how it ended. */
  const vet = async (
    request: FastifyRequest,
    calls: { draft: CheckedCall<'chat'>; verification: CheckedCall<'chat'> },
    plan: Pick<VettingLoopInput, 'draftBody' | 'verificationMessages' | 'maxAttempts' | 'answerKey'>,
    signal: AbortSignal,
  ) => {
    const models = { draft: calls.draft.target.resolved, verification: calls.verification.target.resolved };
    const tally = newLoopTally();
    let outcome: LoopOutcome;
    try {
      outcome = await runVettingLoop({
        draft: callerFor(request, calls.draft, signal),
        verify: callerFor(request, calls.verification, signal),
        draftBody: plan.draftBody,
        verificationMessages: plan.verificationMessages,
        maxAttempts: plan.maxAttempts,
        fallbackMessage: config.vetting.fallbackMessage,
        answerKey: plan.answerKey,
        signal,
        tally,
      });
    } catch (error) {
      // A later draft refused for the caller's input (a 4xx): the calls before it are still
      // logged and charged. A client that went away keeps the limiter's estimate instead, as
      // its cancelled call used an amount nobody reported.
      if (!signal.aborted) recordOutcome(request, tally, models, vettingExtra(null, tally, models.draft, models.verification));
      throw error;
    }
    recordOutcome(request, outcome, models, vettingExtra(outcome.stopReason, outcome, models.draft, models.verification));
    return outcome;
  };

  app.post(
    '/v1/chat/vetting',
    {
      config: { scope: 'model:request' },
      schema: {
        summary: 'Chat with a verification pass (lightweight VETTING)',
        description:
          'Drafts a reply with `model`, has the internal verification model check it against vettingConfig, and redrafts with feedback until it passes or maxAttempts is used. Fails closed: without a pass the reply is the configured fallback message. Never streams.',
        ...VETTING_SCHEMA,
        body: LightweightVettingBody,
        response: { 200: LightweightVettingResponse },
      },
    },
    async (request, reply) => {
      const { body, record } = request;
      startRecord(record, body);
      const requested = body.model ?? config.vetting.defaultModel ?? catalog.defaultChatModel;
      const draft = checkModel(request, { model: requested, param: 'model', providerHint: body.provider, chosenByCaller: true, messages: body.messages });
      const verification = checkModel(request, { model: internalVerificationModel, param: 'vetting.verificationModel', chosenByCaller: false });
      const plan = planLightweight(body, { keyring: keyring.forProject(projectOf(request.principal)), verifierInstructions, maxAttemptsLimit: config.vetting.maxAttemptsLimit });
      record.requestPayload = plan.loggedRequest;
      await admit(request, reply, [draft, verification], plan, plan.maxAttempts);

      const outcome = await vet(request, { draft, verification }, { ...plan, answerKey: null }, abortSignalOf(reply));
      const draftModel = draft.target.resolved;
      const response = lightweightResponse(outcome, {
        requestId: request.id,
        model: draftModel.id,
        createdAt: record.startedAt,
        withAttempts: isPlaygroundRoute(request.routeOptions.url),
      });
      record.responsePayload = response;
      return response;
    },
  );

  app.post(
    '/v1/vetting/full',
    {
      config: { scope: 'model:request' },
      schema: {
        summary: 'Answer-key VETTING',
        description:
          'mode "vetting": drafts with config.chatModel, checks every draft against context.items (answer keys) locally and with config.verificationModel, and redrafts until a draft passes; fails closed with the configured fallback. mode "chat": one draft, no verification. Never streams.',
        ...VETTING_SCHEMA,
        body: FullVettingBody,
        response: { 200: FullVettingResponse },
      },
    },
    async (request, reply) => {
      const { body, record } = request;
      startRecord(record, body);
      const draft = checkModel(request, { model: body.config.chatModel.modelId, param: 'config.chatModel.modelId', chosenByCaller: true, messages: body.messages });
      const draftModel = draft.target.resolved;
      const plan = planFull(body, {
        keyring: keyring.forProject(projectOf(request.principal)),
        defaultChatPrompt: config.vetting.chatSystemPrompt ?? DEFAULT_TUTOR_PROMPT,
        verifierInstructions,
        maxAttemptsLimit: config.vetting.maxAttemptsLimit,
      });
      record.requestPayload = plan.loggedRequest;
      const signal = abortSignalOf(reply);
      const meta = { mode: plan.mode, startedAt: record.startedAt, body };

      if (plan.mode === 'chat') {
        await admit(request, reply, [draft], plan, 1);
        const outcome = await runChatOnly(callerFor(request, draft, signal), plan.draftBody, config.vetting.fallbackMessage);
        recordOutcome(request, { chatUsage: outcome.chatUsage, verificationUsage: null }, { draft: draftModel, verification: null }, { vettingMode: 'chat', chatModel: draftModel.id });
        const response = fullResponse({ ...outcome, verificationUsage: null, verification: null }, meta);
        record.responsePayload = response;
        return response;
      }

      const verification = checkModel(request, { model: plan.verificationModelId, param: 'config.verificationModel.modelId', chosenByCaller: true });
      await admit(request, reply, [draft, verification], plan, plan.maxAttempts);
      const outcome = await vet(request, { draft, verification }, plan, signal);
      const response = fullResponse(
        {
          content: outcome.content,
          requiresAttention: outcome.requiresAttention,
          chatUsage: outcome.chatUsage,
          verificationUsage: outcome.verificationUsage,
          verification: {
            stopReason: outcome.stopReason,
            attemptCount: outcome.chatCalls,
            attempts: outcome.attempts,
            lastFailureReason: outcome.lastFailureReason,
          },
        },
        meta,
      );
      record.responsePayload = response;
      return response;
    },
  );
};

/** What the request log keeps about a loop beyond usage: who drafted, who verified, how it ended (null: the loop threw). */
function vettingExtra(stopReason: StopReason | null, tally: LoopTally, draftModel: ResolvedModel, verificationModel: ResolvedModel): Record<string, unknown> {
  return {
    vettingMode: 'vetting',
    chatModel: draftModel.id,
    verificationModel: verificationModel.id,
    verificationProvider: verificationModel.model.provider,
    stopReason,
    attemptCount: tally.chatCalls,
    verificationCalls: tally.verificationCalls,
    chatUsage: tally.chatUsage,
    verificationUsage: tally.verificationUsage,
  };
}
