import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { connectMcpClient, mcpError, startTestMcpServer, type TestMcpServer } from './helpers/mcp-servers.js';

const connect = (secret: string) => connectMcpClient(gateway.url, secret);

const STDIO_SERVER = fileURLToPath(new URL('./fixtures/mcp/stdio-server.mjs', import.meta.url));
const EVERYTHING = fileURLToPath(new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));
const STATIC_TOKEN = 'static-token-7f3a9c2e5b1d4068';

let files: TestMcpServer;
let gateway: TestGateway;


before(async () => {
  files = await startTestMcpServer({ requireBearer: STATIC_TOKEN });
  gateway = await startTestGateway({
    env: { FILES_TOKEN: STATIC_TOKEN, LOCAL_VALUE: 'from-the-gateway-env' },
    configFile: {
      mcp: {
        allowAddresses: ['127.0.0.1/32'],
        servers: [
          { name: 'files', url: files.url, tokenEnv: 'FILES_TOKEN', timeoutMs: 5000 },
          { name: 'local', command: [process.execPath, STDIO_SERVER], env: { MCP_TEST_VALUE: { env: 'LOCAL_VALUE' } } },
          { name: 'everything', command: [process.execPath, EVERYTHING, 'stdio'], timeoutMs: 20000 },
        ],
      },
    },
  });
});

after(async () => {
  await gateway.close();
  await files.stop();
});

test('the official SDK client lists the tools of every server, named server__tool, and calls them', async () => {
  const client = await connect(await gateway.createKey({ scopes: ['mcp:use'] }));
  const listed = await client.listTools();
  const names = listed.tools.map((tool) => tool.name);
  for (const name of ['files__echo', 'files__x__y', 'local__whoami', 'everything__echo', 'everything__get-sum']) assert.ok(names.includes(name), `${name} is listed`);
  assert.deepEqual(listed._meta, { modelgate: { unavailable: [] } });

  const echoed = await client.callTool({ name: 'files__echo', arguments: { text: 'hello' } });
  assert.deepEqual(echoed.content, [{ type: 'text', text: 'hello' }]);
  const everything = await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } });
  assert.match(JSON.stringify(everything.content), /5/);
  // A stdio server's environment holds what its config reads from the gateway's.
  const local = await client.callTool({ name: 'local__whoami', arguments: {} });
  assert.match(JSON.stringify(local.content), /from-the-gateway-env/);
  // The upstream got the static token; the client never sees it.
  assert.equal(files.authorizations.at(-1), `Bearer ${STATIC_TOKEN}`);
  assert.doesNotMatch(JSON.stringify(listed), new RegExp(STATIC_TOKEN));
  await client.close();
});

test('every tool call is a request-log record: endpoint /mcp, mode tool, server, tool, arguments and result', async () => {
  const client = await connect(await gateway.createKey({ scopes: ['mcp:use'] }));
  await client.callTool({ name: 'files__echo', arguments: { text: `key ${STATIC_TOKEN} inside` } });
  await client.close();
  await gateway.gateway.context.logs.writer.flush();
  const list = await gateway.admin('GET', '/admin/v1/logs?endpoint=/mcp&limit=50');
  const summary = list.body.data.find((row: { requested_model: string }) => row.requested_model === 'files__echo');
  assert.ok(summary !== undefined, 'the call is in the log');
  const record = await loggedRecord(gateway, summary.request_id);
  assert.equal(record.mode, 'tool');
  assert.equal(record.provider, 'files');
  assert.equal(record.status, 200);
  assert.equal(record.detail.extra.tool, 'echo');
  // Arguments and result go through the payload redaction: the configured token is never stored.
  assert.doesNotMatch(JSON.stringify(record), new RegExp(STATIC_TOKEN));
  assert.match(JSON.stringify(record.request_payload), /inside/);
  assert.match(JSON.stringify(record.response_payload), /inside/);
});

test('a tool result is data: text that looks like a template comes back as it was', async () => {
  const client = await connect(await gateway.createKey({ scopes: ['mcp:use'] }));
  const result = await client.callTool({ name: 'files__template', arguments: {} });
  assert.deepEqual(result.content, [{ type: 'text', text: 'Hello {{input}} from {{vars.secret}} ${process.env.HOME}' }]);
  await client.close();
});

test('a key without the scope mcp:use is refused', async () => {
  const secret = await gateway.createKey({ scopes: ['model:request'] });
  const response = await fetch(`${gateway.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  });
  assert.equal(response.status, 403);
  assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'insufficient_scope');
});

test('refused /mcp requests are request-log records: the wrong scope names its key, an unknown key is counted', async () => {
  const secret = await gateway.createKey({ scopes: ['model:request'] });
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
  const post = (authorization: string) =>
    fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-platform-id': 'tools-\u00e9client' },
      body: JSON.stringify(initialize),
    });
  const wrongScope = await post(`Bearer ${secret}`);
  assert.equal(wrongScope.status, 403);
  const record = await loggedRecord(gateway, wrongScope.headers.get('x-request-id')!);
  assert.equal(record.endpoint, '/mcp');
  assert.equal(record.error_code, 'insufficient_scope');
  assert.equal(record.mode, 'tool');
  assert.notEqual(record.key_id, null);
  // The header is kept as every endpoint keeps it: printable ASCII only (a client cannot even send control characters).
  assert.equal(record.platform, 'tools-client');

  const unknown = await post('Bearer mg-not-a-key-0123456789abcdef0123456789');
  assert.equal(unknown.status, 401);
  gateway.gateway.context.logs.refusals.flush();
  await gateway.gateway.context.logs.writer.flush();
  const list = await gateway.admin('GET', '/admin/v1/logs?endpoint=/mcp&limit=50');
  assert.ok(list.body.data.some((row: { status: number }) => row.status === 401), 'the unknown key\'s refusal is in the log');
});

test('allowedTools: a key sees and calls only its tools; look-alikes, "__" names and hidden servers get the unknown-tool answer', async () => {
  const client = await connect(await gateway.createKey({ scopes: ['mcp:use'], allowedTools: ['files__echo', 'local__*'] }));
  const listed = await client.listTools();
  assert.deepEqual(listed.tools.map((tool) => tool.name).sort(), ['files__echo', 'local__exit', 'local__whoami']);
  const unknown = await mcpError(client.callTool({ name: 'never__heard', arguments: {} }));
  for (const name of ['files__template', 'files__x__y', 'files__еcho', 'files___echo', 'everything__echo', 'files_', '__echo', 'local__whoami\u200b']) {
    const error = await mcpError(client.callTool({ name, arguments: {} }));
    assert.equal(error.code, unknown.code, name);
    assert.equal(error.message.replace(name, 'NAME'), unknown.message.replace('never__heard', 'NAME'), `${name}: the same answer as a tool that does not exist`);
  }
  assert.ok(!files.calls.some((call) => call.name !== 'echo' && call.name !== 'template'), 'no refused call reached the server');
  await client.close();
});

test('a project allow-list restricts its keys as well as their own', async () => {
  const project = await gateway.admin('POST', '/admin/v1/projects', { id: 'mcp-restricted' });
  assert.equal(project.status, 201);
  const changed = await gateway.admin('PATCH', '/admin/v1/projects/mcp-restricted', { allowed_tools: ['files__*'] });
  assert.equal(changed.status, 200);
  assert.deepEqual(changed.body.allowed_tools, ['files__*']);
  const client = await connect(await gateway.createKey({ scopes: ['mcp:use'], projectId: 'mcp-restricted', allowedTools: ['files__echo', 'local__*'] }));
  const listed = await client.listTools();
  assert.deepEqual(listed.tools.map((tool) => tool.name), ['files__echo']);
  await mcpError(client.callTool({ name: 'local__whoami', arguments: {} }));
  await client.close();
});

test("another key's session id gets the same 404 as an unknown one", async () => {
  const owner = await connect(await gateway.createKey({ scopes: ['mcp:use'] }));
  const sessionId = (owner.transport as StreamableHTTPClientTransport).sessionId!;
  const other = await gateway.createKey({ scopes: ['mcp:use'] });
  const send = (id: string) =>
    fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
  const stolen = await send(sessionId);
  const unknown = await send('00000000-0000-4000-8000-000000000000');
  assert.equal(stolen.status, 404);
  const [stolenBody, unknownBody] = [(await stolen.json()) as { error: { code: string; message: string } }, (await unknown.json()) as { error: { code: string; message: string } }];
  assert.equal(stolenBody.error.code, 'mcp_session_not_found');
  assert.equal(stolenBody.error.message, unknownBody.error.message);
  // The owner's session still works.
  assert.ok((await owner.listTools()).tools.length > 0);
  await owner.close();
});

test('the per-minute limit counts tool calls', async () => {
  const client = await connect(await gateway.createKey({ scopes: ['mcp:use'], rpm: 2 }));
  await client.callTool({ name: 'files__echo', arguments: { text: '1' } });
  await client.callTool({ name: 'files__echo', arguments: { text: '2' } });
  const refused = await mcpError(client.callTool({ name: 'files__echo', arguments: { text: '3' } }));
  assert.equal((refused.data as { modelgate: { code: string } }).modelgate.code, 'rate_limit_exceeded');
  await client.close();
});

test('a tool error is a result; a server error is an MCP error naming the server', async () => {
  const client = await connect(await gateway.createKey({ scopes: ['mcp:use'] }));
  const failed = await client.callTool({ name: 'files__fail', arguments: {} });
  assert.equal(failed.isError, true);
  const rejected = await mcpError(client.callTool({ name: 'files__reject', arguments: {} }));
  assert.match(rejected.message, /MCP server "files" answered with an error: .*path/);
  assert.equal((rejected.data as { modelgate: { code: string } }).modelgate.code, 'mcp_server_error');
  await client.close();
});

test('a stdio server that exits mid-session is named while it is gone, and started again by a later call', async () => {
  const client = await connect(await gateway.createKey({ scopes: ['mcp:use'] }));
  const before = JSON.stringify((await client.callTool({ name: 'local__whoami', arguments: {} })).content);
  const gone = new Promise<void>((resolve) => gateway.gateway.context.mcp.onHealthChanged((server, health) => server === 'local' && health.state === 'unavailable' && resolve()));
  await client.callTool({ name: 'local__exit', arguments: {} });
  await gone;
  assert.equal(gateway.gateway.context.mcp.summaries().find((server) => server.name === 'local')?.health.state, 'unavailable');
  const again = JSON.stringify((await client.callTool({ name: 'local__whoami', arguments: {} })).content);
  assert.match(again, /from-the-gateway-env/);
  assert.notEqual(again, before, 'another process answers');
  await client.close();
});

test('/readyz and the admin API show each server\'s health; credentials never appear', async () => {
  const ready = (await (await fetch(`${gateway.url}/readyz`)).json()) as { checks: { mcp_servers: Record<string, string> } };
  assert.equal(ready.checks.mcp_servers.files, 'ok');
  const servers = await gateway.admin('GET', '/admin/v1/mcp/servers');
  assert.equal(servers.status, 200);
  const names = servers.body.data.map((server: { name: string }) => server.name);
  assert.deepEqual(names, ['files', 'local', 'everything']);
  assert.doesNotMatch(JSON.stringify(servers.body), new RegExp(STATIC_TOKEN));
  const status = await gateway.admin('GET', '/admin/v1/status');
  assert.deepEqual(status.body.mcp_servers.map((server: { name: string }) => server.name), ['files', 'local', 'everything']);
  const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: 'Bearer mg-admin-test-token-0123456789abcdef' } })).text();
  assert.match(metrics, /modelgate_mcp_server_up\{server="files"\} 1/);
  assert.match(metrics, /modelgate_mcp_tool_calls_total\{server="files",tool="echo",outcome="ok"\} \d+/);
});

test('the tool source of a model call: the key\'s tools narrowed to the servers asked for, each call counted', async () => {
  const secret = await gateway.createKey({ scopes: ['mcp:use'], allowedTools: ['files__echo', 'local__*'] });
  const principal = gateway.gateway.context.keys.authenticator.authenticate({ authorization: `Bearer ${secret}` }, 'mcp:use');
  // A server the key may not see is refused as one that does not exist, never silently left out.
  await assert.rejects(gateway.gateway.context.mcp.toolSource(await principal, { servers: ['files', 'everything'] }), /no MCP server "everything" this key may use/);
  await assert.rejects(gateway.gateway.context.mcp.toolSource(await principal, { servers: ['nowhere'] }), /no MCP server "nowhere" this key may use/);
  const source = await gateway.gateway.context.mcp.toolSource(await principal, { servers: ['files'] });
  const signal = new AbortController().signal;
  const listed = await source.list(signal);
  assert.deepEqual(listed.tools.map((tool) => tool.name), ['files__echo']);
  assert.deepEqual(listed.unavailable, []);
  assert.deepEqual((await source.call('files__echo', { text: 'from a model' }, signal)).content, [{ type: 'text', text: 'from a model' }]);
  await assert.rejects(source.call('local__whoami', {}, signal), /Unknown tool "local__whoami"/);
});

test('prompts and resources are served the same way: named by server, within the allow-lists', async () => {
  const whole = await connect(await gateway.createKey({ scopes: ['mcp:use'], allowedTools: ['everything__*'] }));
  const prompts = await whole.listPrompts();
  assert.ok(prompts.prompts.some((prompt) => prompt.name === 'everything__simple-prompt'));
  assert.deepEqual(prompts._meta, { modelgate: { unavailable: [] } });
  const prompt = await whole.getPrompt({ name: 'everything__simple-prompt' });
  assert.ok(prompt.messages.length > 0);
  const templates = await whole.listResourceTemplates();
  assert.ok(templates.resourceTemplates.some((template) => template.uriTemplate === 'demo://resource/dynamic/text/{resourceId}'));
  const read = await whole.readResource({ uri: 'demo://resource/dynamic/text/7' });
  assert.equal(read.contents[0]?.uri, 'demo://resource/dynamic/text/7');
  await whole.close();

  // One tool of the server: no prompt outside the list, no resources (they need server__*).
  const narrow = await connect(await gateway.createKey({ scopes: ['mcp:use'], allowedTools: ['everything__echo'] }));
  assert.deepEqual((await narrow.listPrompts()).prompts, []);
  assert.deepEqual((await narrow.listResourceTemplates()).resourceTemplates, []);
  assert.deepEqual((await narrow.listResources()).resources, []);
  const hiddenPrompt = await mcpError(narrow.getPrompt({ name: 'everything__simple-prompt' }));
  assert.match(hiddenPrompt.message, /Unknown prompt "everything__simple-prompt"/);
  const hiddenResource = await mcpError(narrow.readResource({ uri: 'demo://resource/dynamic/text/7' }));
  assert.match(hiddenResource.message, /Unknown resource "demo:\/\/resource\/dynamic\/text\/7"/);
  await narrow.close();
});
