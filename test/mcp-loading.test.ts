import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The MCP SDK and the schema library it brings (decisions/0036). */
const SDK_MODULE = /\/node_modules\/(@modelcontextprotocol\/sdk|zod|zod-to-json-schema)\//;

test('a gateway with no MCP servers starts, answers and stops without loading the MCP SDK; the first /mcp request loads it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-loads-'));
  try {
    const script = `
      import { readFileSync } from 'node:fs';
      const sdkModules = () => readFileSync(process.env.LOADED_MODULES_FILE, 'utf8').split('\\n').filter((url) => ${SDK_MODULE}.test(url));
      const { startTestGateway } = await import('./test/helpers/gateway.ts');
      const gateway = await startTestGateway();
      const ready = await gateway.fetch('/readyz');
      const status = await gateway.admin('GET', '/admin/v1/status');
      const servers = await gateway.admin('GET', '/admin/v1/mcp/servers');
      const idle = sdkModules();
      const key = await gateway.createKey({ scopes: ['mcp:use'] });
      const initialize = await fetch(gateway.url + '/mcp', {
        method: 'POST',
        headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } }),
      });
      await initialize.text();
      const used = sdkModules();
      await gateway.close();
      console.log(JSON.stringify({ ready: ready.status, status: status.status, servers: servers.body.data, idle, initialize: initialize.status, used: used.length }));
    `;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--import', './test/fixtures/record-loads.mjs', '--input-type=module', '-e', script], {
      env: { ...process.env, LOADED_MODULES_FILE: join(dir, 'loaded') },
      encoding: 'utf8',
      timeout: 90_000,
    });
    assert.equal(result.status, 0, result.stderr);
    const seen = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
    assert.deepEqual({ ready: seen.ready, status: seen.status, servers: seen.servers, idle: seen.idle }, { ready: 200, status: 200, servers: [], idle: [] });
    assert.equal(seen.initialize, 200);
    // The recorder sees the SDK's modules once something loads them: the empty list above is not for want of looking.
    assert.ok(seen.used > 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
