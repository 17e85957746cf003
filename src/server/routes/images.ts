import { Type, type Static } from '@sinclair/typebox';
import { estimateImages } from '../../limits/index.js';
import type { JsonObject } from '../../model-api/index.js';
import type { RouteModule } from '../app.js';
import {
  admitCall,
  connectionGoneSignal,
  defaultModelOf,
  ERROR_RESPONSES,
  MODEL_ROUTE_SCHEMA,
  refuseStreaming,
  sendJsonText,
} from './model-call.js';
import { showRequestedModel, upstreamBody } from '../../formats/index.js';
import { Nullable } from './schema-helpers.js';

/**
 * The OpenAI image generation request; other fields (quality, style, background, user, …) pass
 * through. The optional fields take null as "not set", as OpenAI's API and the SDKs' types do.
 */
const ImageRequest = Type.Object(
  {
    model: Type.Optional(Nullable(Type.String({ minLength: 1, description: 'Default: the catalog\'s image model' }))),
    prompt: Type.String({ minLength: 1 }),
    n: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 10 }))),
    size: Type.Optional(Nullable(Type.String({ pattern: '^([0-9]+x[0-9]+|auto)$', description: '<width>x<height>, e.g. 1024x1024' }))),
    response_format: Type.Optional(Nullable(Type.Unsafe<string>({ type: 'string', enum: ['url', 'b64_json'] }))),
  },
  { additionalProperties: true },
);

type ImageBody = Static<typeof ImageRequest> & JsonObject;

const ImageResponse = Type.Object(
  { created: Type.Integer(), data: Type.Array(Type.Object({ url: Type.Optional(Type.String()), b64_json: Type.Optional(Type.String()) }, { additionalProperties: true })) },
  { additionalProperties: true },
);

export const imagesRoutes: RouteModule = (app, context) => {
  app.post(
    '/v1/images/generations',
    {
      config: { scope: 'model:request' },
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: 'Generate images',
        description: 'OpenAI Images-compatible generation. Never streams: `stream: true` is a 400.',
        body: ImageRequest,
        response: { 200: ImageResponse, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const body = request.body as ImageBody;
      request.call.describe({ mode: 'image_generation', payload: body });
      refuseStreaming(body.stream, '/v1/images/generations');
      const model = body.model ?? defaultModelOf(context, 'image_generation');
      const call = await admitCall(request, reply, { mode: 'image_generation', model, capability: 'images' }, ({ target }) =>
        estimateImages(target.resolved.model.entry.pricing, body.prompt, body.n ?? 1),
      );
      const signal = connectionGoneSignal(reply);
      const result = await call.invoke((images, attempt) => images.generate({ ...attempt, body: upstreamBody(body), signal, requestId: request.id }), signal);
      showRequestedModel(result.response, model);
      // The log's redaction makes each image a reference (type, bytes, SHA-256).
      request.call.answered({ payload: result.response });
      return sendJsonText(reply, result.response);
    },
  );
};
