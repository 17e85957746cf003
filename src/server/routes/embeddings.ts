import { Type, type Static } from '@sinclair/typebox';
import { invalidBody } from '../../errors/index.js';
import { estimateTokens } from '../../limits/index.js';
import { patchJsonObject } from '../../providers/index.js';
import type { EmbeddingResult, JsonObject } from '../../model-api/index.js';
import type { RouteModule } from '../app.js';
import {
  bodyBytes,
  connectionGoneSignal,
  defaultModelOf,
  ERROR_RESPONSES,
  MODEL_ROUTE_SCHEMA,
  sendBytes,
  sendJsonText,
  servedHeaders,
} from './model-call.js';
import { admitCached, cacheTicketFor, EMBEDDING_TRAITS } from './response-cache.js';
import { showRequestedModel, upstreamBody } from '../../formats/index.js';

/** The OpenAI embeddings request; other fields (dimensions, encoding_format, user, …) pass through. */
const EmbeddingsRequest = Type.Object(
  {
    model: Type.Optional(Type.String({ minLength: 1, description: 'Default: the catalog\'s embedding model' })),
    input: Type.Unknown({ description: 'A string, an array of strings, or token arrays' }),
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    encoding_format: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['float', 'base64'] })),
  },
  { additionalProperties: true },
);

type EmbeddingsBody = Static<typeof EmbeddingsRequest> & JsonObject;

const EmbeddingsResponse = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(Type.Object({}, { additionalProperties: true })), model: Type.String(), usage: Type.Optional(Type.Object({}, { additionalProperties: true })) },
  { additionalProperties: true },
);

function checkInput(input: unknown): void {
  const valid = (typeof input === 'string' && input.length > 0) || (Array.isArray(input) && input.length > 0);
  if (!valid) throw invalidBody('input must be a non-empty string or a non-empty array of strings (or token arrays).', 'input');
}

/** The embeddings kept in the log: their count and size, not the vectors. */
function logSummary({ response, vectors }: EmbeddingResult): JsonObject {
  return { object: response.object, embeddings: vectors.count, dimensions: vectors.dimensions, model: response.model, usage: response.usage };
}

export const embeddingsRoutes: RouteModule = (app, context) => {
  app.post(
    '/v1/embeddings',
    {
      config: { scope: 'model:request' },
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: 'Create embeddings',
        description: 'OpenAI-compatible embeddings. `stream` is not honoured here.',
        body: EmbeddingsRequest,
        response: { 200: EmbeddingsResponse, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const body = request.body as EmbeddingsBody;
      request.call.describe({ mode: 'embedding', payload: body });
      checkInput(body.input);
      const model = body.model ?? defaultModelOf(context, 'embedding');
      const call = request.call.check({ mode: 'embedding', model, capability: 'embeddings', allowedFor: request.principal, onServed: servedHeaders(reply) });
      const upstream = upstreamBody(body);
      // Embeddings are deterministic: a policy's onlyDeterministic never leaves them out.
      const cache = await cacheTicketFor(request, reply, {
        surface: 'embeddings',
        model: call.target.resolved.id,
        stream: false,
        body: upstream,
        traits: EMBEDDING_TRAITS,
      });
      await admitCached(request, reply, call, cache, () => estimateTokens(call.target.resolved.model.entry.pricing, bodyBytes(request), 0));
      const signal = connectionGoneSignal(reply);
      const result = await call.invoke(
        (embeddings, attempt) => embeddings.embed({ ...attempt, body: upstream, sourceJson: request.jsonBytes, signal, requestId: request.id }),
        signal,
        { cache },
      );
      const providerModel = result.response.model;
      showRequestedModel(result.response, model);
      request.call.answered({ payload: logSummary(result) });
      if (result.responseJson === undefined) return sendJsonText(reply, result.response);
      // The provider's bytes as they came; `model` is rewritten only when it names another id.
      const unchanged = providerModel === undefined || providerModel === model;
      return sendBytes(reply, 'application/json', unchanged ? result.responseJson : patchJsonObject(result.responseJson, { model }, []));
    },
  );
};
