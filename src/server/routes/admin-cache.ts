import { Type, type Static } from '@sinclair/typebox';
import { GatewayError } from '../../errors/index.js';
import { PROJECT_ID_PATTERN } from '../../keys/index.js';
import type { RouteModule } from '../app.js';
import { recordChange } from '../audit-trail.js';
import { ADMIN_SCHEMA, registerAdminRoutes } from './admin-scope.js';

const ClearQuery = Type.Object(
  { project: Type.Optional(Type.String({ pattern: PROJECT_ID_PATTERN, description: "Only this project's answers (its keys' own namespaces too); default every answer" })) },
  { additionalProperties: false },
);

const Cleared = Type.Object({
  object: Type.Literal('cache.cleared'),
  project: Type.Union([Type.String(), Type.Null()]),
  cleared: Type.Integer({ description: 'Answers removed' }),
  store: Type.Union([Type.Literal('memory'), Type.Literal('redis')]),
});

/**
 * `DELETE /admin/v1/cache[?project=]`: removes cached answers (docs/caching.md). With Redis
 * every instance's cache is the one cleared; with the in-process store, this instance's.
 */
export const adminCacheRoutes: RouteModule = async (app, context) => {
  await registerAdminRoutes(app, context, (admin) => {
    admin.delete(
      '/cache',
      { schema: { ...ADMIN_SCHEMA, summary: "Clear the response cache, or one project's part of it", querystring: ClearQuery, response: { 200: Cleared } } },
      async (request) => {
        const { project } = request.query as Static<typeof ClearQuery>;
        if (project !== undefined && (await context.keys.projects.find(project)) === undefined) {
          throw new GatewayError('not_found', `No project with id "${project}": modelgate projects list shows them.`, { param: 'project' });
        }
        const cleared = await context.cache.clear(project);
        const answer = { object: 'cache.cleared' as const, project: project ?? null, cleared, store: context.cache.storeKind };
        await recordChange(context.audit, request, { action: 'cache.clear', target: { type: project === undefined ? 'cache' : 'project', id: project ?? null }, after: answer });
        return answer;
      },
    );
  });
};
