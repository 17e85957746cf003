import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { loadConfig } from '../src/config/index.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { connectMcpClient as connectTo, mcpError, startTestMcpServer } from './helpers/mcp-servers.js';

const connect = (gateway: TestGateway, secret: string) => connectTo(gateway.url, secret);


/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const codeOf = (error: McpError) => (error.data as { modelgate: { code: string } }).modelgate.code;

test('a server that hangs, one that cannot be reached and one that goes away are named, never a silently shorter list', async () => {
  const good = await startTestMcpServer({ tools: ['echo'] });
  const hanging = await startTestMcpServer({ tools: ['echo'] });
  const leaving = await startTestMcpServer({ tools: ['echo'] });
  const gateway = await startTestGateway({
    configFile: {
      mcp: {
        allowAddresses: ['127.0.0.0/8'],
        servers: [
          { name: 'good', url: good.url },
          { name: 'hanging', url: hanging.url, timeoutMs: 300 },
          { name: 'nowhere', url: `http://127.0.0.1:${await closedPort()}/mcp`, timeoutMs: 2000 },
          { name: 'leaving', url: leaving.url },
        ],
      },
    },
  });
  try {
    const client = await connect(gateway, await gateway.createKey({ scopes: ['mcp:use'] }));
    assert.equal((await client.callTool({ name: 'leaving__echo', arguments: { text: 'here' } })).isError, undefined);
    hanging.hang();
    await leaving.stop();

    const listed = await client.listTools();
    assert.deepEqual(listed.tools.map((tool) => tool.name), ['good__echo']);
    assert.deepEqual((listed._meta as { modelgate: { unavailable: string[] } }).modelgate.unavailable.sort(), ['hanging', 'leaving', 'nowhere']);

    const timedOut = await mcpError(client.callTool({ name: 'hanging__echo', arguments: { text: 'x' } }));
    assert.match(timedOut.message, /MCP server "hanging" is unavailable \(no answer within 300 ms\)/);
    assert.equal(codeOf(timedOut), 'mcp_server_unavailable');
    const gone = await mcpError(client.callTool({ name: 'leaving__echo', arguments: { text: 'x' } }));
    assert.match(gone.message, /MCP server "leaving" is unavailable \(it could not be reached\)/);
    // The reason for the operator (address, connection error) stays out of the caller's message.
    assert.doesNotMatch(gone.message, /127\.0\.0\.1|ECONNREFUSED/);

    const ready = (await (await fetch(`${gateway.url}/readyz`)).json()) as { status: string; checks: { mcp_servers: Record<string, string> } };
    assert.deepEqual(ready.checks.mcp_servers, { good: 'ok', hanging: 'unavailable', nowhere: 'unavailable', leaving: 'unavailable' });
    const status = await gateway.admin('GET', '/admin/v1/mcp/servers');
    const nowhere = status.body.data.find((server: { name: string }) => server.name === 'nowhere');
    assert.equal(nowhere.state, 'unavailable');
    assert.match(nowhere.reason, /fetch failed|ECONNREFUSED/);

    // Each failed call is a record too, with its error code.
    await gateway.gateway.context.logs.writer.flush();
    const logged = await gateway.admin('GET', '/admin/v1/logs?endpoint=/mcp&limit=50');
    const failures = logged.body.data.filter((row: { error_code: string | null }) => row.error_code === 'mcp_server_unavailable');
    assert.equal(failures.length, 2);
    assert.ok(failures.every((row: { status: number; mode: string }) => row.status === 502 && row.mode === 'tool'));
    await client.close();
  } finally {
    await gateway.close();
    await good.stop();
    await hanging.stop();
  }
});

test('no SSRF: a server URL of a private or loopback address is refused unless mcp.allowAddresses lists it', async () => {
  const server = await startTestMcpServer({ tools: ['echo'] });
  const gateway = await startTestGateway({ configFile: { mcp: { servers: [{ name: 'inside', url: server.url }] } } });
  try {
    const client = await connect(gateway, await gateway.createKey({ scopes: ['mcp:use'] }));
    const listed = await client.listTools();
    assert.deepEqual(listed.tools, []);
    assert.deepEqual((listed._meta as { modelgate: { unavailable: string[] } }).modelgate.unavailable, ['inside']);
    assert.equal(server.authorizations.length, 0, 'nothing reached the address');
    const status = await gateway.admin('GET', '/admin/v1/mcp/servers');
    assert.match(status.body.data[0].reason, /private, loopback, link-local or reserved/);
    await client.close();
  } finally {
    await gateway.close();
    await server.stop();
  }
});

test('OAuth client credentials: the gateway gets a token from the token endpoint and sends it; the secret never leaves', async () => {
  const server = await startTestMcpServer({ oauthClient: { id: 'gateway-client', secret: 'client-secret-5d8e1f0a9b7c' }, tools: ['echo'] });
  const gateway = await startTestGateway({
    env: { TOOLS_CLIENT_ID: 'gateway-client', TOOLS_CLIENT_SECRET: 'client-secret-5d8e1f0a9b7c' },
    configFile: {
      mcp: {
        allowAddresses: ['127.0.0.1'],
        servers: [{ name: 'tools', url: server.url, oauth: { tokenUrl: server.tokenUrl, clientIdEnv: 'TOOLS_CLIENT_ID', clientSecretEnv: 'TOOLS_CLIENT_SECRET', scope: 'tools:call' } }],
      },
    },
  });
  try {
    const client = await connect(gateway, await gateway.createKey({ scopes: ['mcp:use'] }));
    const result = await client.callTool({ name: 'tools__echo', arguments: { text: 'with a token' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'with a token' }]);
    assert.equal(server.tokenRequests[0]?.grantType, 'client_credentials');
    assert.equal(server.tokenRequests[0]?.scope, 'tools:call');
    assert.equal(server.tokenRequests[0]?.basic, `Basic ${Buffer.from('gateway-client:client-secret-5d8e1f0a9b7c').toString('base64')}`);
    assert.ok(server.authorizations.every((authorization) => authorization === 'Bearer token-1'), 'one token, reused');
    const status = await gateway.admin('GET', '/admin/v1/mcp/servers');
    assert.equal(status.body.data[0].auth, 'oauth');
    assert.doesNotMatch(JSON.stringify(status.body), /client-secret|token-1/);
    await client.close();
  } finally {
    await gateway.close();
    await server.stop();
  }
});

test('servers added through the admin API are served, announced to open sessions, and removed again', async () => {
  const server = await startTestMcpServer({ tools: ['echo'] });
  const gateway = await startTestGateway({ configFile: { mcp: { allowAddresses: ['127.0.0.1'], servers: [] } } });
  try {
    const client = await connect(gateway, await gateway.createKey({ scopes: ['mcp:use'] }));
    assert.deepEqual((await client.listTools()).tools, []);
    // The notification stream of the session (GET /mcp) is open once the client is connected.
    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));

    const refused = await gateway.admin('POST', '/admin/v1/mcp/servers', { name: 'bad__name', url: server.url });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error.message, /must not contain "__"/);
    const missing = await gateway.admin('POST', '/admin/v1/mcp/servers', { name: 'added', url: server.url, tokenEnv: 'NOT_SET_ANYWHERE' });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error.message, /tokenEnv: the environment variable NOT_SET_ANYWHERE is not set/);

    const added = await gateway.admin('POST', '/admin/v1/mcp/servers', { name: 'added', url: server.url });
    assert.equal(added.status, 201);
    assert.equal(added.body.source, 'admin');
    await changed;
    assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['added__echo']);

    assert.equal((await gateway.admin('DELETE', '/admin/v1/mcp/servers/added')).status, 204);
    assert.deepEqual((await client.listTools()).tools, []);
    assert.equal((await gateway.admin('DELETE', '/admin/v1/mcp/servers/added')).status, 404);
    await client.close();
  } finally {
    await gateway.close();
    await server.stop();
  }
});

/** The config of this file's contents (the environment left out). */
function loadConfigWith(file: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-mcp-config-'));
  try {
    writeFileSync(join(dir, 'modelgate.yaml'), toYaml(file));
    return loadConfig({ env: { MODELGATE_DATA_DIR: join(dir, 'data') }, cwd: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the config is checked at start-up, each problem naming its field', () => {
  const cases: [unknown, RegExp][] = [
    [{ name: 'Files', url: 'https://a.example/mcp' }, /mcp\.servers\.0\.name/],
    [{ name: 'a__b', url: 'https://a.example/mcp' }, /mcp\.servers\[0\]\.name: "a__b" must not contain "__"/],
    [{ name: 'files' }, /mcp\.servers\[0\]\.url: give either url \(Streamable HTTP\) or command \(stdio\)/],
    [{ name: 'files', url: 'https://a.example/mcp', command: ['node'] }, /mcp\.servers\[0\]\.url: give either/],
    [{ name: 'files', command: ['node'], tokenEnv: 'T' }, /mcp\.servers\[0\]\.tokenEnv: is for HTTP servers/],
    [{ name: 'files', url: 'https://user:pw@a.example/mcp' }, /mcp\.servers\[0\]\.url: must not carry credentials/],
    [{ name: 'files', url: 'https://a.example/mcp', headers: { Authorization: 'plain-secret' } }, /mcp\.servers\.0\.headers\.Authorization/],
  ];
  for (const [server, message] of cases) {
    assert.throws(() => loadConfigWith({ mcp: { servers: [server] } }), message, JSON.stringify(server));
  }
  assert.throws(() => loadConfigWith({ mcp: { servers: [{ name: 'x', url: 'https://a.example/mcp' }, { name: 'x', command: ['node'] }] } }), /mcp\.servers\[1\]\.name: "x" is already the name of mcp\.servers\[0\]/);
});

test('a variable a server needs that is not set stops start-up naming the setting', async () => {
  await assert.rejects(
    startTestGateway({ configFile: { mcp: { servers: [{ name: 'files', url: 'https://tools.example/mcp', headers: { 'X-Token': { env: 'UNSET_MCP_TOKEN' } } }] } } }),
    /invalid setting mcp\.servers\[0\]\.headers\.X-Token\.env: the environment variable UNSET_MCP_TOKEN is not set/,
  );
});

test('server-everything over Streamable HTTP (its own sessions) is an upstream like any; a bad reload keeps the servers in force', async () => {
  const port = await closedPort();
  const everything = spawn(process.execPath, [fileURLToPath(new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url)), 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    let stderr = '';
    everything.stderr.setEncoding('utf8');
    const listening = new Promise<void>((resolve, reject) => {
      everything.stderr.on('data', (chunk: string) => {
        stderr += chunk;
        if (stderr.includes('listening on port')) resolve();
      });
      everything.once('exit', () => reject(new Error(`server-everything exited: ${stderr}`)));
    });
    await listening;
    const gateway = await startTestGateway({ configFile: { mcp: { allowAddresses: ['127.0.0.1'], servers: [{ name: 'everything', url: `http://127.0.0.1:${port}/mcp` }] } } });
    try {
      const client = await connect(gateway, await gateway.createKey({ scopes: ['mcp:use'] }));
      const listed = await client.listTools();
      assert.ok(listed.tools.some((tool) => tool.name === 'everything__echo'));
      const echoed = await client.callTool({ name: 'everything__echo', arguments: { message: 'over http' } });
      assert.match(JSON.stringify(echoed.content), /over http/);

      // A reload with a bad entry is refused whole: the server in force still answers.
      assert.throws(() => gateway.gateway.context.mcp.applyServers([{ name: 'everything', url: `http://127.0.0.1:${port}/mcp`, env: {}, headers: {}, timeoutMs: 30000, tokenEnv: 'UNSET_RELOAD_TOKEN' }]), /UNSET_RELOAD_TOKEN is not set/);
      assert.match(JSON.stringify((await client.callTool({ name: 'everything__echo', arguments: { message: 'still here' } })).content), /still here/);
      await client.close();
    } finally {
      await gateway.close();
    }
  } finally {
    everything.kill();
    if (everything.exitCode === null) await once(everything, 'exit');
  }
});
