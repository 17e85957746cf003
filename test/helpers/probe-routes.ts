import type { RouteModule } from '../../src/server/app.js';
import { SCOPES } from '../../src/keys/index.js';

/** Path of the test-only keyed route that needs `scope`, e.g. /test/probe/utils-crypto. */
export function probePath(scope: (typeof SCOPES)[number]): string {
  return `/test/probe/${scope.replace(':', '-')}`;
}

/**
 * Test-only keyed routes, one per scope, so auth and key propagation are tested without
 * depending on the model routes. Each answers who the caller was.
 */
export const probeRoutes: RouteModule = (app) => {
  for (const scope of SCOPES) {
    app.post(probePath(scope), { config: { scope }, schema: { hide: true } }, async (request) => ({
      kind: request.principal.kind,
      key_id: request.principal.kind === 'key' ? request.principal.keyId : null,
    }));
  }
};
