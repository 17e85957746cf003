import { Type } from '@sinclair/typebox';
import { ROLES, toUserView, type Role } from '../../accounts/index.js';
import { GatewayError } from '../../errors/index.js';
import { adminPrincipalOf, EVERY_ROLE_MAY_CALL } from '../admin-auth.js';
import type { RouteModule } from '../app.js';
import { recordChange } from '../audit-trail.js';
import { clearedSessionCookie, sessionCookie } from '../session-cookie.js';
import { ADMIN_SCHEMA, registerAdminRoutes } from './admin-scope.js';
import { listOf } from './schema-helpers.js';

/**
 * Dashboard accounts through the admin API (docs/dashboard.md): signing in and out, the current
 * session, and the accounts themselves (admin token or an `admin` session only). The CLI's
 * `users` commands are clients of these routes.
 */

const RoleSchema = Type.Unsafe<Role>({ type: 'string', enum: [...ROLES] });
const EmailSchema = Type.String({ minLength: 3, maxLength: 400 });
const PasswordSchema = Type.String({ minLength: 1, maxLength: 1024 });

const SignInBody = Type.Object({ email: EmailSchema, password: PasswordSchema }, { additionalProperties: false });
const TeamIdsSchema = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100, description: 'the teams a team_admin manages' });
const CreateUserBody = Type.Object(
  { email: EmailSchema, password: PasswordSchema, role: Type.Optional(RoleSchema), team_ids: Type.Optional(TeamIdsSchema) },
  { additionalProperties: false },
);
const RoleBody = Type.Object({ role: RoleSchema, team_ids: Type.Optional(TeamIdsSchema) }, { additionalProperties: false });
const PasswordBody = Type.Object({ password: PasswordSchema }, { additionalProperties: false });
const UserParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 400 }) });

const UserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: RoleSchema,
  team_ids: Type.Array(Type.String()),
  sso: Type.Boolean({ description: 'made or linked by single sign-on: its role follows the provider\'s groups at each sign-in' }),
  disabled: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const SessionView = Type.Object({
  user: UserView,
  csrf_token: Type.String(),
  expires_at: Type.String(),
  idle_timeout_seconds: Type.Number(),
});

export const adminAccountsRoutes: RouteModule = async (app, context) => {
  const { accounts, audit } = context;

  // Signing in is the one admin route without a credential: it makes one.
  await app.register(
    async (scope) => {
      scope.post(
        '/session',
        { schema: { ...ADMIN_SCHEMA, summary: 'Sign in to the dashboard (sets the session cookie)', body: SignInBody, response: { 200: SessionView } } },
        async (request, reply) => {
          const { email, password } = request.body as { email: string; password: string };
          const signedIn = await accounts.signIn(email, password, request.ip);
          request.log.info({ userId: signedIn.view.user.id }, 'dashboard: signed in');
          const { user } = signedIn.view;
          await recordChange(audit, request, { action: 'session.sign_in', target: { type: 'user', id: user.id } }, { kind: 'user', id: user.id, email: user.email });
          reply.header('set-cookie', sessionCookie(request, signedIn.token, Date.parse(signedIn.view.expires_at)));
          reply.header('cache-control', 'no-store');
          return signedIn.view;
        },
      );
    },
    { prefix: '/admin/v1' },
  );

  await registerAdminRoutes(app, context, (admin) => {
    admin.get(
      '/session',
      { config: EVERY_ROLE_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'The signed-in session, with its CSRF token', response: { 200: SessionView } } },
      async (request, reply) => {
        const principal = adminPrincipalOf(request);
        if (principal.kind !== 'session') {
          throw new GatewayError('not_found', 'The admin token has no dashboard session; sign in with POST /admin/v1/session.');
        }
        reply.header('cache-control', 'no-store');
        return accounts.viewOf(principal.token, principal);
      },
    );

    admin.delete(
      '/session',
      { config: EVERY_ROLE_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'Sign out (ends the session everywhere)' } },
      async (request, reply) => {
        const principal = adminPrincipalOf(request);
        if (principal.kind === 'session') await accounts.signOut(principal.token);
        await recordChange(audit, request, { action: 'session.sign_out', target: { type: 'user', id: principal.kind === 'session' ? principal.user.id : null } });
        reply.header('set-cookie', clearedSessionCookie(request));
        reply.code(204);
      },
    );

    admin.get(
      '/users',
      { schema: { ...ADMIN_SCHEMA, summary: 'List dashboard accounts', response: { 200: listOf(UserView) } } },
      async () => ({ object: 'list' as const, data: (await accounts.users.list()).map(toUserView) }),
    );

    admin.post(
      '/users',
      { schema: { ...ADMIN_SCHEMA, summary: 'Create a dashboard account', body: CreateUserBody, response: { 201: UserView } } },
      async (request, reply) => {
        const { email, password, role, team_ids: teamIds } = request.body;
        const row = await accounts.createUser(email, password, role ?? 'admin', teamIds);
        request.log.info({ userId: row.id, role: row.role }, 'admin: dashboard account created');
        const view = toUserView(row);
        await recordChange(audit, request, { action: 'user.create', target: { type: 'user', id: row.id }, after: view });
        reply.code(201);
        return view;
      },
    );

    for (const [action, disabled] of [['disable', true], ['enable', false]] as const) {
      admin.post(
        `/users/:id/${action}`,
        { schema: { ...ADMIN_SCHEMA, summary: `${action === 'disable' ? 'Disable (ends its sessions)' : 'Enable'} a dashboard account`, params: UserParams, response: { 200: UserView } } },
        async (request) => {
          const before = toUserView(await accounts.users.get(request.params.id));
          const row = await accounts.setDisabled(request.params.id, disabled);
          request.log.info({ userId: row.id }, `admin: dashboard account ${action}d`);
          const after = toUserView(row);
          await recordChange(audit, request, { action: `user.${action}`, target: { type: 'user', id: row.id }, before, after });
          return after;
        },
      );
    }

    admin.patch(
      '/users/:id',
      { schema: { ...ADMIN_SCHEMA, summary: "Change a dashboard account's role and teams (ends its sessions)", params: UserParams, body: RoleBody, response: { 200: UserView } } },
      async (request) => {
        const before = toUserView(await accounts.users.get(request.params.id));
        const row = await accounts.setRole(request.params.id, { role: request.body.role, teamIds: request.body.team_ids ?? [] });
        request.log.info({ userId: row.id, role: row.role }, 'admin: dashboard account role changed');
        const after = toUserView(row);
        await recordChange(audit, request, { action: 'user.update', target: { type: 'user', id: row.id }, before, after });
        return after;
      },
    );

    admin.post(
      '/users/:id/password',
      { schema: { ...ADMIN_SCHEMA, summary: "Set a dashboard account's password (ends its sessions)", params: UserParams, body: PasswordBody, response: { 200: UserView } } },
      async (request) => {
        const row = await accounts.resetPassword(request.params.id, request.body.password);
        request.log.info({ userId: row.id }, 'admin: dashboard password reset');
        const view = toUserView(row);
        // The password itself is never recorded: the entry says it was set, and by whom.
        await recordChange(audit, request, { action: 'user.password_reset', target: { type: 'user', id: row.id }, after: view });
        return view;
      },
    );
  });
};
