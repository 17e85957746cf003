import type { Catalog, ResolvedModel } from '../catalog/index.js';
import { GatewayError, withArticle } from '../errors/index.js';
import { assertModelAllowed, type Principal } from '../keys/index.js';
import type { CallContext, ProviderRegistry } from '../providers/index.js';
import type { ChatMessageInput } from './request-schema.js';
import type { ChatCaller } from './types.js';

export interface ModelChoice {
  requested: string;
  /** Body field that named it, for the 400s. */
  param: string;
  providerHint?: string | undefined;
  /** false for the internal verification model of the lightweight endpoint, which the caller does not pick. */
  checkKeyAllows: boolean;
}

/** Resolves a VETTING model: chat mode only (a non-chat model is model_mode_mismatch), and allowed for the key. */
export function resolveVettingModel(catalog: Catalog, principal: Principal, choice: ModelChoice): ResolvedModel {
  const resolved = catalog.resolve(choice.requested, { mode: 'chat', param: choice.param, providerHint: choice.providerHint });
  if (choice.checkKeyAllows) {
    try {
      assertModelAllowed(principal, resolved.requested, resolved.id);
    } catch (error) {
      if (error instanceof GatewayError) throw new GatewayError(error.code, error.message, { param: choice.param });
      throw error;
    }
  }
  return resolved;
}

/** Rejects media the drafting model cannot read, before any provider call. */
export function assertInputsSupported(model: ResolvedModel, messages: readonly ChatMessageInput[]): void {
  const accepts = new Set(model.model.entry.input_modalities);
  messages.forEach((message, messageIndex) => {
    if (typeof message.content === 'string') return;
    message.content.forEach((part, partIndex) => {
      const needed = part.type === 'text' ? null : part.type === 'image_url' ? ['image'] : ['file', 'pdf'];
      if (needed === null || needed.some((modality) => accepts.has(modality))) return;
      const param = `messages[${messageIndex}].content[${partIndex}]`;
      throw new GatewayError(
        'unsupported_input_modality',
        `${param} is ${withArticle(part.type)} part, but the model "${model.requested}" does not accept ${needed.join(' or ')} input. Pick a model whose input_modalities in GET /v1/models include it.`,
        { param },
      );
    });
  });
}

/** A ChatCaller bound to one model; the provider is looked up at call time so a missing one is a failed call. */
export function chatCallerFor(providers: ProviderRegistry, model: ResolvedModel, call: CallContext): ChatCaller {
  return async (body) => {
    const chat = providers.get(model.model.provider).chat;
    if (chat === undefined) {
      throw new GatewayError('provider_error', 'The provider that serves this model cannot answer chat requests.', {
        logDetail: { provider: model.model.provider, reason: 'provider has no chat capability' },
      });
    }
    return chat.complete({ upstreamModel: model.model.upstreamId, body, signal: call.signal, requestId: call.requestId });
  };
}
