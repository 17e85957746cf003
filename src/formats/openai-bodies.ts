import type { JsonObject } from '../model-api/index.js';

/** OpenAI-shaped bodies (chat, embeddings, images, speech) as the gateway takes and answers them. */

/** The caller's body without the gateway's own fields: what goes to the provider. */
export function upstreamBody(body: JsonObject): JsonObject {
  const { model: _model, provider: _provider, stream: _stream, ...rest } = body;
  return rest;
}

/** Shows the caller the model it asked for (the provider reports its own id). */
export function showRequestedModel(body: JsonObject, requested: string): JsonObject {
  if ('model' in body) body.model = requested;
  return body;
}
