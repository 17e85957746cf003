import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { SIGN_IN_WINDOW_MS } from '../../accounts/index.js';
import { isGatewayError } from '../../errors/index.js';
import type { RouteModule } from '../app.js';
import { recordChange } from '../audit-trail.js';
import { publicBaseUrl } from '../public-url.js';
import { clearedSignOnCookie, sessionCookie, signOnCookie, signOnStateOf } from '../session-cookie.js';
import { ADMIN_SCHEMA } from './admin-scope.js';

/**
 * Dashboard single sign-on (docs/security.md#single-sign-on): whether it is configured (for
 * the sign-in page), the start that sends the browser to the OpenID provider, and the
 * callback the provider sends it back to. Like POST /admin/v1/session these need no
 * credential: they make one. The callback answers with redirects into the dashboard, never
 * with JSON (a browser is following it).
 */

const SIGN_ON_PATH = '/admin/v1/sso/callback';

const LoginQuery = Type.Object({ return_to: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false });
const CallbackQuery = Type.Record(Type.String(), Type.String());
const SsoView = Type.Object({ enabled: Type.Boolean(), provider_name: Type.Union([Type.String(), Type.Null()]) });

export const adminSsoRoutes: RouteModule = async (app, context) => {
  const sso = context.singleSignOn;
  const redirectUri = (request: Parameters<typeof publicBaseUrl>[1]) => `${publicBaseUrl(context.config, request)}${SIGN_ON_PATH}`;

  await app.register(
    async (untyped) => {
      const scope = untyped.withTypeProvider<TypeBoxTypeProvider>();
      scope.get(
        '/sso',
        { schema: { ...ADMIN_SCHEMA, summary: 'Whether dashboard single sign-on is configured, and the name of its provider', response: { 200: SsoView } } },
        async () => ({ enabled: sso !== undefined, provider_name: sso?.settings.providerName ?? null }),
      );

      if (sso === undefined) return;

      scope.get(
        '/sso/login',
        { schema: { ...ADMIN_SCHEMA, summary: 'Start a single sign-on: redirects to the OpenID provider', querystring: LoginQuery } },
        async (request, reply) => {
          const start = await sso.begin(redirectUri(request), request.query.return_to);
          reply.header('set-cookie', signOnCookie(request, start.state, SIGN_IN_WINDOW_MS / 1000));
          reply.header('cache-control', 'no-store');
          return reply.redirect(start.authorizationUrl, 302);
        },
      );

      scope.get(
        '/sso/callback',
        { schema: { ...ADMIN_SCHEMA, summary: "The OpenID provider's redirect back: finishes the sign-in and opens the dashboard", querystring: CallbackQuery } },
        async (request, reply) => {
          reply.header('cache-control', 'no-store');
          // The URL the provider redirected to: the registered redirect URI with its query.
          const query = request.url.indexOf('?');
          const callbackUrl = new URL(`${redirectUri(request)}${query === -1 ? '' : request.url.slice(query)}`);
          try {
            const { signedIn, returnTo } = await sso.complete(callbackUrl, signOnStateOf(request), request.ip);
            const { user } = signedIn.view;
            request.log.info({ userId: user.id, role: user.role }, 'dashboard: signed in by single sign-on');
            await recordChange(
              context.audit,
              request,
              { action: 'session.sign_in', target: { type: 'user', id: user.id }, after: { method: 'sso', role: user.role, team_ids: user.team_ids } },
              { kind: 'user', id: user.id, email: user.email },
            );
            reply.header('set-cookie', [clearedSignOnCookie(request), sessionCookie(request, signedIn.token, Date.parse(signedIn.view.expires_at))]);
            return reply.redirect(`/dashboard${returnTo}`, 302);
          } catch (error) {
            if (!isGatewayError(error)) throw error;
            request.log.warn({ code: error.code }, 'dashboard: single sign-on refused');
            reply.header('set-cookie', clearedSignOnCookie(request));
            return reply.redirect(`/dashboard/sign-in?sso_error=${encodeURIComponent(error.message)}`, 302);
          }
        },
      );
    },
    { prefix: '/admin/v1' },
  );
};
