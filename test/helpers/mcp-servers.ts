import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';

/** What the test server's tools answer (named as the tests need them). */
export const TEST_TOOLS: Tool[] = [
  { name: 'echo', description: 'Echoes its text', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  { name: 'template', description: 'Answers text that looks like a template', inputSchema: { type: 'object' } },
  { name: 'fail', description: 'A tool error (isError)', inputSchema: { type: 'object' } },
  { name: 'reject', description: 'A JSON-RPC error', inputSchema: { type: 'object' } },
  { name: 'read', description: 'Reads nothing', inputSchema: { type: 'object' } },
  { name: 'x__y', description: 'A tool whose own name holds the separator', inputSchema: { type: 'object' } },
];

export interface TestMcpServer {
  /** The Streamable HTTP endpoint, http://127.0.0.1:PORT/mcp */
  readonly url: string;
  /** The token endpoint of its OAuth client credentials grant. */
  readonly tokenUrl: string;
  /** Authorization headers the MCP endpoint received, in order. */
  readonly authorizations: (string | undefined)[];
  /** Token requests: their grant type and the client's Basic credentials. */
  readonly tokenRequests: { grantType: string | null; basic: string | undefined; scope: string | null }[];
  /** Tool calls received: name and arguments. */
  readonly calls: { name: string; arguments: unknown }[];
  /** Makes every request hang (no answer) from now on. */
  hang(): void;
  /** Stops answering: the listener closes and open connections are cut. */
  stop(): Promise<void>;
}

export interface TestMcpServerOptions {
  /** The bearer the MCP endpoint requires (a static token); none: no check. */
  requireBearer?: string;
  /** The server's OAuth client: client credentials issue tokens `token-N`, which the endpoint then requires. */
  oauthClient?: { id: string; secret: string };
  /** Only these tools of TEST_TOOLS (default: all). */
  tools?: string[];
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => resolve(text));
    request.on('error', reject);
  });
}

function toolServer(calls: TestMcpServer['calls'], tools: Tool[]): Server {
  const server = new Server({ name: 'test-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args } = request.params;
    calls.push({ name, arguments: args });
    switch (name) {
      case 'echo':
        return { content: [{ type: 'text', text: String((args as { text?: unknown } | undefined)?.text ?? '') }] };
      case 'template':
        return { content: [{ type: 'text', text: 'Hello {{input}} from {{vars.secret}} ${process.env.HOME}' }] };
      case 'fail':
        return { content: [{ type: 'text', text: 'the tool could not do it' }], isError: true };
      case 'reject':
        throw new McpError(ErrorCode.InvalidParams, 'argument "path" is required');
      default:
        return { content: [{ type: 'text', text: `called ${name}` }] };
    }
  });
  return server;
}

/** A small MCP server of our own over Streamable HTTP (stateless), with the faults the tests need. */
export async function startTestMcpServer(options: TestMcpServerOptions = {}): Promise<TestMcpServer> {
  const authorizations: TestMcpServer['authorizations'] = [];
  const tokenRequests: TestMcpServer['tokenRequests'] = [];
  const calls: TestMcpServer['calls'] = [];
  const issued = new Set<string>();
  const tools = TEST_TOOLS.filter((tool) => options.tools === undefined || options.tools.includes(tool.name));
  let hanging = false;

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if (hanging) return;
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/token' && request.method === 'POST') {
      const form = new URLSearchParams(await readBody(request));
      tokenRequests.push({ grantType: form.get('grant_type'), basic: request.headers.authorization, scope: form.get('scope') });
      const expected = options.oauthClient === undefined ? undefined : `Basic ${Buffer.from(`${options.oauthClient.id}:${options.oauthClient.secret}`).toString('base64')}`;
      if (form.get('grant_type') !== 'client_credentials' || request.headers.authorization !== expected) {
        response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_client' }));
        return;
      }
      const token = `token-${tokenRequests.length}`;
      issued.add(token);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }));
      return;
    }
    if (path !== '/mcp') {
      response.writeHead(404).end();
      return;
    }
    authorizations.push(request.headers.authorization);
    const bearer = request.headers.authorization?.replace(/^Bearer /, '');
    const allowed = options.requireBearer !== undefined ? bearer === options.requireBearer : options.oauthClient !== undefined ? bearer !== undefined && issued.has(bearer) : true;
    if (!allowed) {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    const body = request.method === 'POST' ? (JSON.parse(await readBody(request)) as unknown) : undefined;
    const server = toolServer(calls, tools);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  };

  const http: HttpServer = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    tokenUrl: `http://127.0.0.1:${port}/token`,
    authorizations,
    tokenRequests,
    calls,
    hang: () => {
      hanging = true;
    },
    stop: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** An official SDK client connected to a gateway's /mcp with this key. */
export async function connectMcpClient(gatewayUrl: string, secret: string): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
  return client;
}

/** The MCP error a call ends with (the assertion fails when it succeeds). */
export async function mcpError(call: Promise<unknown>): Promise<McpError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof McpError, `expected an McpError, got ${String(error)}`);
    return error;
  }
  assert.fail('the call succeeded');
}
