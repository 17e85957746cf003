import { Type, type Static } from '@sinclair/typebox';
import type { RouteModule } from '../app.js';
import { API_REFERENCE_PATH, OPENAPI_DOCUMENT_PATH } from '../docs-branding.js';
import { publicBaseUrl } from '../public-url.js';
import { DASHBOARD_PATH } from './dashboard.js';
import { buildDocsMetadata } from './docs-metadata.js';
import { asksInGeminiShape, geminiModel, geminiModelList } from './gemini.js';
import { messagesModelOf, messagesModelPage, MessagesModelListQuery, MessagesModelListSchema, MessagesModelSchema, type MessagesModelListParameters } from './messages-model-list.js';
import { DocsMetadataResponseSchema, ModelEntrySchema, ModelListResponseSchema, StatusResponseSchema } from './status-schemas.js';

const METADATA_PATH = '/v1/docs/metadata';

/**
 * The status and catalog routes (no key needed): `GET /`, `GET /v1/models`,
 * `GET /v1/models/{model}` and `GET /v1/docs/metadata`.
 */
/** Google's Model and model list (with a Google client's headers or key). */
const GeminiModelSchema = Type.Object({ name: Type.String(), supportedGenerationMethods: Type.Array(Type.String()) }, { additionalProperties: true });
const GeminiModelListSchema = Type.Object({ models: Type.Array(GeminiModelSchema), nextPageToken: Type.Optional(Type.String()) });

export const statusRoutes: RouteModule = (app, context) => {
  const { catalog, config } = context;

  app.get(
    '/',
    {
      schema: {
        summary: 'Service status',
        description: 'Whether the gateway runs, where its documentation is, and the model ids it serves.',
        tags: ['status'],
        response: { 200: StatusResponseSchema },
      },
    },
    async (request) => ({
      status: 'ok' as const,
      message: `modelgate is running. Pick a model from GET /v1/models; call model endpoints with an API key. The API reference is at ${API_REFERENCE_PATH}, its OpenAPI document at ${OPENAPI_DOCUMENT_PATH}. Operators sign in at ${DASHBOARD_PATH}.`,
      documentation: `${publicBaseUrl(config, request)}${API_REFERENCE_PATH}`,
      dashboard: `${publicBaseUrl(config, request)}${DASHBOARD_PATH}`,
      metadata: METADATA_PATH,
      default_model: catalog.defaultChatModel,
      supported_models: catalog.supportedModelIds(),
      upcoming_models: [],
    }),
  );

  app.get(
    '/v1/models',
    {
      schema: {
        summary: 'List models',
        description:
          'The live catalog: every model and service alias with its mode, endpoint, limits and prices, plus legacy aliases. With an anthropic-version header: the chat models in the Messages API\'s list shape, paged by limit, after_id and before_id.',
        tags: ['status'],
        querystring: MessagesModelListQuery,
        response: { 200: Type.Union([ModelListResponseSchema, MessagesModelListSchema, GeminiModelListSchema]) },
      },
    },
    async (request) => {
      if (request.headers['anthropic-version'] !== undefined) return messagesModelPage(catalog.list(), request.query as MessagesModelListParameters);
      if (asksInGeminiShape(request)) return geminiModelList(context, request.query as { pageSize?: string; pageToken?: string }) as Static<typeof GeminiModelListSchema>;
      const models = [...catalog.list()];
      return { object: 'list' as const, default_model: catalog.defaultChatModel, aliases: catalog.aliases(), available_models: models, data: models };
    },
  );

  // A wildcard, not a parameter: ids of OpenAI-compatible servers may hold a "/". The
  // reference documents it as the path parameter it is for callers.
  app.get(
    '/v1/models/*',
    {
      config: {
        swaggerTransform: ({ schema }) => ({
          url: '/v1/models/:model',
          schema: { ...schema, params: Type.Object({ model: Type.String({ description: 'model id or alias; it may hold "/"' }) }) },
        }),
      },
      schema: {
        summary: 'Retrieve a model',
        description:
          'One entry of the catalog by id or alias, as GET /v1/models lists it (the OpenAI SDKs\' models.retrieve; with an anthropic-version header, the Messages API\'s model object); 404 not_found otherwise.',
        tags: ['status'],
        response: { 200: Type.Union([ModelEntrySchema, MessagesModelSchema, GeminiModelSchema]) },
      },
    },
    async (request) => {
      const requested = (request.params as { '*': string })['*'];
      if (asksInGeminiShape(request)) return geminiModel(context, requested) as Static<typeof GeminiModelSchema>;
      const entry = catalog.entry(requested);
      return request.headers['anthropic-version'] === undefined ? entry : { ...messagesModelOf(entry), id: requested };
    },
  );

  app.get(
    METADATA_PATH,
    {
      schema: {
        summary: 'Docs metadata',
        description: 'Model catalog, endpoint list, quickstarts for this gateway, playground examples and pricing notes.',
        tags: ['status'],
        response: { 200: DocsMetadataResponseSchema },
      },
    },
    async (request) => buildDocsMetadata(catalog, publicBaseUrl(config, request), app.publicEndpoints),
  );
};
