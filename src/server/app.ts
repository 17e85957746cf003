import Fastify, { LogController, type FastifyInstance, type FastifyBaseLogger, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { API_REFERENCE_PATH, OPENAPI_DOCUMENT_PATH, PRODUCT_ICON_SVG, PRODUCT_LOGO_SVG } from './docs-branding.js';
import type { GatewayContext } from './context.js';
import { errorHeadersOf, toGatewayError } from './error-mapping.js';
import { GatewayError } from '../errors/index.js';
import { randomHex } from '../crypto/index.js';
import { chatCompletionsFormat, type ErrorFormat } from '../formats/index.js';
import type { Principal } from '../keys/index.js';
import { API_VERSION } from './api-version.js';
import { registerJsonBody } from './json-body.js';
import { LazySchemaCompilers } from './lazy-schemas.js';
import { lazyRequestLogger } from './request-logger.js';
import { clientErrorHandler, clientTimeoutsOf, frameworkError, MAX_PARAM_LENGTH } from './client-errors.js';
import { StalledClientWatch } from './stalled-clients.js';
import { collectPublicEndpoints, type PublicEndpoint } from './public-endpoints.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The public API format whose error shape the route answers in; chat completions' (docs/errors.md) when unset. */
    format?: ErrorFormat;
  }
  interface FastifyInstance {
    /** Cuts off clients that stopped taking their responses. */
    stalledClients: StalledClientWatch;
    /** The public API's endpoints, as the docs metadata lists them (every route registered counts). */
    publicEndpoints: readonly PublicEndpoint[];
  }
}

export type GatewayApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/** A route module: adds its routes to the app using the shared context. */
export type RouteModule = (app: GatewayApp, context: GatewayContext) => void | Promise<void>;

export interface AppModules {
  /**
   * Request decorations and hooks. They run before any plugin is registered: a plugin
   * registered earlier (the API reference page) would not see decorations added later.
   */
  hooks: readonly RouteModule[];
  routes: readonly RouteModule[];
}

/**
 * `req_` and 32 hex digits: the time in milliseconds (12), then 80 random bits (20). Ids in
 * time order are appended to the request log's primary-key index instead of landing on a
 * random page of it, which halves the cost of a small log batch.
 */
function requestIds(): () => string {
  let lastMs = -1;
  let msHex = '';
  return () => {
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      msHex = millisecondsHex(now);
    }
    return `req_${msHex}${randomHex(10)}`;
  };
}

const LOW_24_BITS = 0x100_0000;

/**
 * 12 hex digits of a millisecond time. The time is above 2^31, so V8 holds it as a double
 * and `toString(16)` takes a digit-by-digit floating-point path, paid by every request; its
 * two 24-bit halves are small integers, which print on a much faster path.
 */
function millisecondsHex(ms: number): string {
  const high = Math.floor(ms / LOW_24_BITS);
  return `${high.toString(16).padStart(6, '0')}${(ms - high * LOW_24_BITS).toString(16).padStart(6, '0')}`;
}

/**
 * Builds the HTTP app: framework set-up, the one error mapping, request ids, OpenAPI, and
 * the hooks and route modules given. Listening is left to the caller (tests use port 0).
 */
export async function buildApp(context: GatewayContext, modules: AppModules): Promise<GatewayApp> {
  const { config } = context;
  const schemas = new LazySchemaCompilers();
  const nextRequestId = requestIds();
  const clientTimeouts = clientTimeoutsOf(config.server.requestTimeoutMs);
  const app = Fastify({
    loggerInstance: context.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.server.bodyLimitBytes,
    trustProxy: config.server.trustProxy,
    genReqId: nextRequestId,
    requestTimeout: clientTimeouts.requestMs,
    http: { headersTimeout: clientTimeouts.headersMs, connectionsCheckingInterval: clientTimeouts.checkIntervalMs },
    clientErrorHandler: clientErrorHandler(nextRequestId, clientTimeouts),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: (error, request, reply) => frameworkError(error, request.id, reply.raw),
    childLoggerFactory: lazyRequestLogger,
    requestIdHeader: false,
    // Refused in our own onRequest hook instead, with the gateway's error body (Fastify's has its own shape).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false } },
    schemaController: { compilersFactory: schemas.compilersFactory },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Clients that stop taking their responses are cut off (see stalled-clients.ts).
  const stalledClients = new StalledClientWatch(app.server, config.server.clientStallTimeoutMs);
  app.decorate('stalledClients', stalledClients);
  app.addHook('onClose', (_instance, done) => {
    stalledClients.stop();
    done();
  });
  app.addHook('onListen', (done) => {
    schemas.warmUp((error) => context.logger.error({ err: error }, 'a route schema does not compile'));
    done();
  });

  // Model and utility endpoints take JSON only; anything else is a 415 from the parser.
  app.removeContentTypeParser('text/plain');
  registerJsonBody(app, config.server.bodyLimitBytes);

  // Set when a graceful shutdown starts: requests that still arrive on kept-alive connections
  // are refused, and their connections closed, so the client retries elsewhere.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  // Callback style, like the other per-request hooks: an async hook costs a promise and a turn.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (closing) {
      reply.header('connection', 'close');
      done(new GatewayError('shutting_down', 'The gateway is shutting down. Send the request again: a new connection reaches a running instance.'));
      return;
    }
    done();
  });

  // Each route answers errors in its format's shape (route config `format`); the rest in the gateway's own (docs/errors.md).
  app.setErrorHandler(async (error, request, reply) => {
    const gatewayError = toGatewayError(error, config.server.bodyLimitBytes);
    if (gatewayError.code === 'internal_error') {
      request.log.error({ err: error, requestId: request.id }, 'request failed');
    } else if (gatewayError.code === 'storage_unavailable') {
      request.log.warn({ reason: (error as Error).message, requestId: request.id }, 'request refused: the database is not reachable');
    }
    reply.code(gatewayError.status);
    reply.headers(errorHeadersOf(gatewayError));
    // A keyed request refused before its admission (a bad body, a model it may not use) still
    // tells the caller where its per-minute limit stands, as admitted ones do.
    const principal = request.principal as Principal | null;
    if (principal?.kind === 'key' && !reply.hasHeader('x-ratelimit-limit-requests')) reply.headers(context.limits.lastSeenHeaders(principal));
    // Refused before its body arrived (too large, no valid key): close the connection rather
    // than keep it by reading the rest of the body only to throw it away.
    if (!request.raw.complete) reply.header('connection', 'close');
    const encoded = (request.routeOptions.config.format ?? chatCompletionsFormat).encodeError(gatewayError, request.id);
    reply.headers(encoded.headers);
    return encoded.body;
  });

  app.setNotFoundHandler(async (request) => {
    throw new GatewayError(
      'not_found',
      `There is no route ${request.method} ${request.url.split('?')[0]}. The API reference is at ${API_REFERENCE_PATH}.`,
    );
  });

  for (const hook of modules.hooks) await hook(app, context);

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
          googApiKey: { type: 'apiKey', in: 'header', name: 'x-goog-api-key', description: 'The Gemini API paths also take the key as ?key=' },
        },
      },
    },
  });
  // Own CSP instead of the plugin's: its upgrade-insecure-requests blanks the page on a plain-HTTP
  // gateway reached by any non-loopback name, and Swagger UI injects inline styles. Everything is self-hosted.
  await app.register(swaggerUi, {
    routePrefix: API_REFERENCE_PATH,
    staticCSP:
      "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; form-action 'self'; frame-ancestors 'self'; " +
      "img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'",
    uiConfig: { docExpansion: 'list', deepLinking: true },
    // One URL for the OpenAPI document: the page's own copies (/docs/json, /docs/yaml) send there.
    uiHooks: {
      onRequest: (request, reply, done) => {
        const path = request.url.split('?')[0];
        if (path === `${API_REFERENCE_PATH}/json` || path === `${API_REFERENCE_PATH}/yaml`) void reply.redirect(OPENAPI_DOCUMENT_PATH, 301);
        else done();
      },
    },
    logo: { type: 'image/svg+xml', content: PRODUCT_LOGO_SVG, href: API_REFERENCE_PATH, target: '_self' },
    theme: {
      title: 'modelgate API reference',
      favicon: [{ filename: 'modelgate.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: PRODUCT_ICON_SVG }],
    },
  });
  app.get(OPENAPI_DOCUMENT_PATH, { schema: { hide: true } }, async () => app.swagger());

  app.decorate('publicEndpoints', collectPublicEndpoints(app));
  for (const route of modules.routes) await route(app, context);
  return app;
}
