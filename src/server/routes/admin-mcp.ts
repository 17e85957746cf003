import { Type } from '@sinclair/typebox';
import { ConfigError, McpServerSchema } from '../../config/index.js';
import { GatewayError, invalidBody } from '../../errors/index.js';
import { redactText } from '../../logs/index.js';
import type { ServerSummary } from '../../mcp/index.js';
import type { RouteModule } from '../app.js';
import { recordChange } from '../audit-trail.js';
import { ADMIN_SCHEMA, registerAdminRoutes } from './admin-scope.js';
import { listOf, Nullable } from './schema-helpers.js';

const ServerView = Type.Object({
  name: Type.String(),
  transport: Type.Union([Type.Literal('http'), Type.Literal('stdio')]),
  source: Type.Union([Type.Literal('config'), Type.Literal('admin')]),
  url: Nullable(Type.String({ description: 'origin and path only' })),
  command: Nullable(Type.Array(Type.String())),
  auth: Type.Union([Type.Literal('none'), Type.Literal('token'), Type.Literal('oauth')]),
  header_names: Type.Array(Type.String(), { description: 'the headers sent; their values never leave the gateway' }),
  timeout_ms: Type.Integer(),
  state: Type.Union([Type.Literal('ready'), Type.Literal('connecting'), Type.Literal('unavailable')]),
  since: Type.String(),
  reason: Nullable(Type.String()),
});

/** A server as administrators see it: how it is reached and whether it answers, never a credential. */
export function serverView(summary: ServerSummary) {
  const { config } = summary;
  const url = config.url === undefined ? null : new URL(config.url);
  return {
    name: summary.name,
    transport: summary.transport,
    source: summary.source,
    url: url === null ? null : `${url.origin}${url.pathname}`,
    command: config.command === undefined ? null : config.command.map((part) => redactText(part)),
    auth: config.oauth !== undefined ? ('oauth' as const) : config.tokenEnv !== undefined ? ('token' as const) : ('none' as const),
    header_names: Object.keys(config.headers),
    timeout_ms: config.timeoutMs,
    state: summary.health.state,
    since: new Date(summary.health.since).toISOString(),
    reason: summary.health.reason,
  };
}

/** The admin API of the MCP gateway (docs/admin-api.md): its servers and their health. */
export const adminMcpRoutes: RouteModule = async (app, context) => {
  await registerAdminRoutes(app, context, (admin) => {
    admin.get(
      '/mcp/servers',
      { schema: { ...ADMIN_SCHEMA, summary: 'MCP servers: how each is reached and whether it answers', response: { 200: listOf(ServerView) } } },
      async () => ({ object: 'list' as const, data: context.mcp.summaries().map(serverView) }),
    );

    admin.post(
      '/mcp/servers',
      {
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Add (or replace) an MCP server: the shape of a config file\'s mcp.servers[] entry; credentials only as names of variables',
          body: McpServerSchema,
          response: { 201: ServerView },
        },
      },
      async (request, reply) => {
        const previous = context.mcp.summaries().find((server) => server.name === request.body.name);
        try {
          await context.mcp.addServer(request.body);
        } catch (error) {
          // "invalid setting MCP server "x".url: …" reads as a field of the body here.
          if (error instanceof ConfigError) throw invalidBody(error.message.replace(/^invalid setting /, ''));
          throw error;
        }
        request.log.info({ mcpServer: request.body.name }, 'admin: MCP server added');
        const after = serverView(context.mcp.summaries().find((server) => server.name === request.body.name)!);
        await recordChange(context.audit, request, {
          action: previous === undefined ? 'mcp_server.add' : 'mcp_server.replace',
          target: { type: 'mcp_server', id: request.body.name },
          before: previous === undefined ? null : serverView(previous),
          after,
        });
        reply.code(201);
        return after;
      },
    );

    admin.delete(
      '/mcp/servers/:name',
      { schema: { ...ADMIN_SCHEMA, summary: 'Remove an MCP server added through the admin API', params: Type.Object({ name: Type.String({ maxLength: 64 }) }) } },
      async (request, reply) => {
        const { name } = request.params;
        const server = context.mcp.summaries().find((candidate) => candidate.name === name);
        if (server?.source === 'config') throw invalidBody(`The MCP server "${name}" is declared in the config file; remove it there.`);
        const before = server === undefined ? null : serverView(server);
        if (!(await context.mcp.removeServer(name))) throw new GatewayError('not_found', `There is no MCP server "${name}" added through the admin API. GET /admin/v1/mcp/servers lists them.`);
        request.log.info({ mcpServer: name }, 'admin: MCP server removed');
        await recordChange(context.audit, request, { action: 'mcp_server.remove', target: { type: 'mcp_server', id: name }, before });
        return reply.code(204).send();
      },
    );
  });
};
