import type { RouteModule } from '../app.js';
import { PLAYGROUND_PREFIX } from '../playground-relay.js';
import { registerAdminRoutes } from './admin-scope.js';
import { audioRoutes } from './audio.js';
import { chatRoutes } from './chat.js';
import { embeddingsRoutes } from './embeddings.js';
import { geminiRoutes } from './gemini.js';
import { imagesRoutes } from './images.js';
import { messagesRoutes } from './messages.js';
import { responsesRoutes } from './responses.js';
import { vettingRoutes } from './vetting.js';

/** The model endpoints the playground relays: every endpoint that makes model calls for one request. */
const RELAYED: readonly RouteModule[] = [chatRoutes, messagesRoutes, responsesRoutes, geminiRoutes, vettingRoutes, embeddingsRoutes, imagesRoutes, audioRoutes];

/**
 * The playground: `POST /admin/v1/playground/keys/{keyId}/v1/…` (and `…/v1beta/…` for the Gemini
 * API) is the model endpoint `/v1/…` called as the key `keyId` by an administrator (admin token, or an admin session with its
 * CSRF token). The same route modules serve both, so the body, the answer (an event stream
 * included) and every rule of a call are the same (playground-relay.ts, decision 0016).
 * Kept out of the public OpenAPI document, as all admin routes are.
 */
export const adminPlaygroundRoutes: RouteModule = async (app, context) => {
  await registerAdminRoutes(app, context, (admin) => {
    void admin.register(
      async (scope) => {
        scope.addHook('onRoute', (route) => {
          route.schema = { ...route.schema, hide: true, tags: ['admin'] };
          route.config = { ...route.config, auditExempt: "a key's model call, in the request log; changes no setting" };
        });
        for (const routes of RELAYED) await routes(scope, context);
      },
      { prefix: PLAYGROUND_PREFIX },
    );
  });
};
