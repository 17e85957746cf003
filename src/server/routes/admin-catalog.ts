import type { RouteModule } from '../app.js';
import { ADMIN_SCHEMA, registerAdminRoutes } from './admin-scope.js';

/**
 * The live catalog (and the model endpoints) through the admin API, for the dashboard's model pickers (allowed models
 * of a key): the same entries and aliases as `GET /v1/models`, so the dashboard needs no
 * route outside the admin API.
 */
export const adminCatalogRoutes: RouteModule = async (app, context) => {
  const { catalog } = context;
  await registerAdminRoutes(app, context, (admin) => {
    admin.get('/models', { schema: { ...ADMIN_SCHEMA, summary: 'The live catalog: models and aliases' } }, async () => ({
      object: 'list' as const,
      default_model: catalog.defaultChatModel,
      aliases: catalog.aliases(),
      data: [...catalog.list()],
    }));
    // The model endpoints, as the request log names them, for the dashboard's log filter: read
    // from the route table, so a format's routes appear there when they are registered.
    admin.get('/endpoints', { schema: { ...ADMIN_SCHEMA, summary: 'The model endpoints the request log names' } }, async () => ({
      data: [...new Set(app.publicEndpoints.filter((endpoint) => endpoint.scope === 'model:request').map((endpoint) => endpoint.path))],
    }));
  });
};
