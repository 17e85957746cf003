import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../../keys/index.js';
import type { RouteModule } from '../app.js';
import { platformOf } from '../request-record-hook.js';
import { MODEL_ROUTE_SCHEMA } from './model-call.js';


const MCP_SCHEMA = {
  tags: ['mcp'],
  summary: 'MCP gateway (Streamable HTTP)',
  description:
    'One MCP endpoint for the MCP servers behind the gateway (docs/mcp.md): POST JSON-RPC messages, GET the session\'s notification stream (SSE), DELETE to end the session. Needs a key with the scope mcp:use; tools are named <server>__<tool>.',
  security: MODEL_ROUTE_SCHEMA.security,
};

/**
 * `POST|GET|DELETE /mcp` (decisions §12). The key is checked here rather than by the keyed-route
 * hooks: a session's HTTP requests are not request-log records — its tool calls are, one each
 * (src/mcp/tool-call-log.ts). The SDK's transport then answers on the raw response.
 */
export const mcpRoutes: RouteModule = (app, context) => {
  const { mcp } = context;
  const authenticate = (request: FastifyRequest): Principal | Promise<Principal> => context.keys.authenticator.authenticate(request.headers, 'mcp:use');

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const startedAt = Date.now();
    const platform = platformOf(request.headers['x-platform-id']);
    let serve: Awaited<ReturnType<typeof mcp.prepare>>;
    try {
      const principal = await authenticate(request);
      request.principal = principal;
      serve = await mcp.prepare({ principal, requestId: request.id, platform, method: request.method, headers: request.headers, body: request.body });
    } catch (error) {
      // A refused request (no key, a bad one, the wrong scope, another key's session) is a
      // record like any keyed request's refusal: the request-log hooks finish it with its error.
      request.call = context.calls.begin({ requestId: request.id, endpoint: '/mcp', platform, startedAt });
      request.call.describe({ mode: 'tool', payload: request.body ?? null });
      throw error;
    }
    reply.hijack();
    try {
      await serve(request.raw, reply.raw);
    } catch (error) {
      request.log.error({ err: error, requestId: request.id }, 'the MCP transport failed');
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' });
      reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
    }
  };

  app.post('/mcp', { schema: MCP_SCHEMA }, handler);
  app.get('/mcp', { schema: MCP_SCHEMA }, handler);
  app.delete('/mcp', { schema: MCP_SCHEMA }, handler);
};
