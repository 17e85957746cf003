import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { teamIdsOf } from '../../accounts/index.js';
import { GatewayError } from '../../errors/index.js';
import type { GatewayApp } from '../app.js';
import type { GatewayContext } from '../context.js';
import { adminPrincipalOf } from '../admin-auth.js';
import { unauditedChangeHook } from '../audit-trail.js';

/** Schema fields of every admin route: tagged admin and kept out of the public OpenAPI document. */
export const ADMIN_SCHEMA = { hide: true, tags: ['admin'] };

/**
 * For responses that carry a secret (a key's secret, decrypted text, log payloads): no cache
 * on the way, nor the browser's, may keep them.
 */
export const noStore: onRequestHookHandler = (_request, reply, done) => {
  reply.header('cache-control', 'no-store');
  done();
};

/**
 * Registers `routes` under /admin/v1, every request authorised (admin token or dashboard
 * session, src/server/admin-auth.ts) before anything else; no response is stored by caches;
 * a change answered without an audit entry is reported (audit-trail.ts).
 */
export async function registerAdminRoutes(app: GatewayApp, context: GatewayContext, routes: (admin: GatewayApp) => void): Promise<void> {
  await app.register(
    async (scope) => {
      const admin = scope.withTypeProvider<TypeBoxTypeProvider>();
      admin.addHook('onRequest', context.adminAuthentication);
      admin.addHook('onRequest', noStore);
      admin.addHook('onResponse', unauditedChangeHook((fields, message) => context.logger.error(fields, message)));
      routes(admin);
    },
    { prefix: '/admin/v1' },
  );
}

/**
 * The projects an admin request may see and change: every project (the admin token, an `admin`
 * or `viewer` session), or the projects of a `team_admin`'s teams (`projects.team_id`), read
 * once per request. The routes a team admin may call (TEAM_ADMIN_MAY_CALL) apply it to every
 * list and every lookup; a key, record or agent outside it is answered as one that does not exist.
 */
export type ProjectScope = { readonly all: true } | { readonly all: false; readonly projectIds: readonly string[] };

const EVERY_PROJECT: ProjectScope = { all: true };
const scopes = new WeakMap<FastifyRequest, Promise<ProjectScope>>();

export function projectScopeOf(request: FastifyRequest, context: GatewayContext): Promise<ProjectScope> {
  let scope = scopes.get(request);
  if (scope === undefined) {
    const principal = adminPrincipalOf(request);
    scope =
      principal.kind === 'session' && principal.user.role === 'team_admin'
        ? context.keys.projects.idsOfTeams(teamIdsOf(principal.user)).then((projectIds) => ({ all: false, projectIds }))
        : Promise.resolve(EVERY_PROJECT);
    scopes.set(request, scope);
  }
  return scope;
}

/** The team ids a request may read: null for every team, or a team admin's own. */
export function visibleTeams(request: FastifyRequest): readonly string[] | null {
  const principal = adminPrincipalOf(request);
  return principal.kind === 'session' && principal.user.role === 'team_admin' ? teamIdsOf(principal.user) : null;
}

export function inScope(scope: ProjectScope, projectId: string): boolean {
  return scope.all || scope.projectIds.includes(projectId);
}

/** The project ids a query is limited to: null for every project. */
export function scopedProjectIds(scope: ProjectScope): readonly string[] | null {
  return scope.all ? null : scope.projectIds;
}

/**
 * Throws `notFound` when the project is outside the request's scope: another team's key,
 * record or agent gets the same 404 as an unknown one, so its existence does not show.
 */
export async function assertInScope(request: FastifyRequest, context: GatewayContext, projectId: string, notFound: () => GatewayError): Promise<void> {
  if (!inScope(await projectScopeOf(request, context), projectId)) throw notFound();
}
