import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyBaseLogger, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { GatewayContext } from './context.js';
import { toGatewayError } from './error-mapping.js';
import { GatewayError } from '../errors/index.js';
import { API_VERSION } from './api-version.js';

export type GatewayApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/** A route module: adds its routes to the app using the shared context. */
export type RouteModule = (app: GatewayApp, context: GatewayContext) => void | Promise<void>;

/**
 * Builds the HTTP app: framework set-up, the one error mapping, request ids, OpenAPI, and
 * the route modules given. Listening is left to the caller (tests use inject or port 0).
 */
export async function buildApp(context: GatewayContext, routes: readonly RouteModule[]): Promise<GatewayApp> {
  const { config } = context;
  const app = Fastify({
    loggerInstance: context.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.server.bodyLimitBytes,
    trustProxy: config.server.trustProxy,
    genReqId: () => `req_${randomUUID().replaceAll('-', '')}`,
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Model and utility endpoints take JSON only; anything else is a 415 from the parser.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  app.setErrorHandler(async (error, request, reply) => {
    const gatewayError = toGatewayError(error, config.server.bodyLimitBytes);
    if (gatewayError.code === 'internal_error') {
      request.log.error({ err: error, requestId: request.id }, 'request failed');
    }
    reply.code(gatewayError.status);
    if (gatewayError.retryAfterSeconds !== undefined) reply.header('retry-after', String(gatewayError.retryAfterSeconds));
    if (gatewayError.headers !== undefined) reply.headers(gatewayError.headers);
    return gatewayError.toBody(request.id);
  });

  app.setNotFoundHandler(async (request) => {
    throw new GatewayError(
      'not_found',
      `There is no route ${request.method} ${request.url.split('?')[0]}. The API reference is at /docs.`,
    );
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'modelgate',
        version: API_VERSION,
        description: 'OpenAI-compatible model gateway: chat, VETTING, agents, embeddings, images, audio and utilities.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer sk-mg-…' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  for (const route of routes) await route(app, context);
  return app;
}
