import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, shoot, signIn, watchedPage } from './helpers/dashboard-browser.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startTestMcpServer, type TestMcpServer } from './helpers/mcp-servers.js';

/**
 * The dashboard's MCP servers page in Debian's Chromium: the config file's server and its
 * health, a server added and removed through the form, and a tool call in the usage page.
 * Screenshots go to test-artifacts/dashboard/.
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const ADMIN = { email: 'mcp-admin@example.com', password: 'admin password 0123' };
const TOKEN = 'mcp-static-token-0b9e7d6c5a4f';

let files: TestMcpServer;
let extra: TestMcpServer;
let gateway: TestGateway;
let browser: Browser;
const problems: string[] = [];

describe('the MCP servers page in a browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    files = await startTestMcpServer({ tools: ['echo'], requireBearer: TOKEN });
    extra = await startTestMcpServer({ tools: ['read'] });
    gateway = await startTestGateway({
      env: { FILES_TOKEN: TOKEN },
      configFile: { mcp: { allowAddresses: ['127.0.0.1'], servers: [{ name: 'files', url: files.url, tokenEnv: 'FILES_TOKEN' }] } },
    });
    await gateway.gateway.context.accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
    await files?.stop();
    await extra?.stop();
  });

  test('an admin sees the servers and their health, adds one, removes it, and finds tool calls in usage', async () => {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    const secret = await gateway.createKey({ scopes: ['mcp:use'] });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
    await client.callTool({ name: 'files__echo', arguments: { text: 'from the e2e test' } });
    await client.close();

    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, ADMIN);
    await page.getByRole('link', { name: 'MCP servers' }).click();
    const table = page.getByRole('table', { name: 'Upstream MCP servers' });
    const filesRow = table.getByRole('row').filter({ hasText: 'files' });
    await filesRow.getByText('ok', { exact: true }).waitFor();
    assert.match(await filesRow.innerText(), /config file/);
    assert.match(await filesRow.innerText(), /token/);
    assert.doesNotMatch(await page.content(), new RegExp(TOKEN), 'the token never reaches the page');

    await page.getByLabel('Name').fill('extra');
    await page.getByLabel('URL').fill(extra.url);
    await page.getByRole('button', { name: 'Add server' }).click();
    const extraRow = table.getByRole('row').filter({ hasText: 'extra' });
    await extraRow.getByText('dashboard').waitFor();
    await shoot(page, SCREENSHOTS, 'mcp-servers');
    assert.deepEqual(
      (await gateway.admin('GET', '/admin/v1/mcp/servers')).body.data.map((server: { name: string }) => server.name),
      ['files', 'extra'],
    );

    // A bad entry is refused with the gateway's message, naming what to fix.
    await page.getByLabel('Name').fill('files');
    await page.getByLabel('URL').fill(extra.url);
    await page.getByRole('button', { name: 'Add server' }).click();
    await page.getByRole('alert').filter({ hasText: 'config file declares a server named "files"' }).waitFor();

    await extraRow.getByRole('button', { name: 'Remove extra' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Remove' }).click();
    await extraRow.waitFor({ state: 'detached' });

    // A server removed elsewhere after the page listed it: the refusal is shown and the list read again.
    assert.equal((await gateway.admin('POST', '/admin/v1/mcp/servers', { name: 'elsewhere', url: extra.url })).status, 201);
    await page.getByRole('button', { name: 'Refresh' }).click();
    const elsewhereRow = table.getByRole('row').filter({ hasText: 'elsewhere' });
    await elsewhereRow.getByText('dashboard').waitFor();
    assert.equal((await gateway.admin('DELETE', '/admin/v1/mcp/servers/elsewhere')).status, 204);
    await elsewhereRow.getByRole('button', { name: 'Remove elsewhere' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('alert').filter({ hasText: 'There is no MCP server "elsewhere"' }).waitFor();
    await elsewhereRow.waitFor({ state: 'detached' });

    await gateway.gateway.context.logs.writer.flush();
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByLabel('Group by').selectOption('model');
    await page.getByRole('rowheader', { name: 'files__echo' }).waitFor();
    await shoot(page, SCREENSHOTS, 'mcp-usage');
    // A key for MCP tools, made in the keys dialog with its allowed tools.
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('mcp-agent');
    await dialog.getByLabel(/mcp:use/).check();
    await dialog.getByLabel('Allowed MCP tools').fill('files__echo, files__*');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await dialog.getByRole('button', { name: 'Copy secret' }).waitFor();
    const made = (await gateway.admin('GET', '/admin/v1/keys')).body.data.find((key: { name: string }) => key.name === 'mcp-agent');
    assert.deepEqual(made.scopes, ['model:request', 'mcp:use']);
    assert.deepEqual(made.allowed_tools, ['files__echo', 'files__*']);

    // The one 400 is the refused entry above, the one 404 the server removed elsewhere.
    assert.deepEqual(problems, [
      'console: Failed to load resource: the server responded with a status of 400 (Bad Request)',
      'console: Failed to load resource: the server responded with a status of 404 (Not Found)',
    ]);
  });
});
