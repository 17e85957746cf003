import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { onRequestHookHandler } from 'fastify';
import type { GatewayApp } from '../app.js';
import type { GatewayContext } from '../context.js';
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
