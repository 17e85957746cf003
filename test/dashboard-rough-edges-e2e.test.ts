import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, shoot as shootInto, signIn as signInAs, startDashboardRig, watchedPage, type DashboardRig } from './helpers/dashboard-browser.js';
import type { OpenAIFake } from './fakes/openai.js';
import type { TestGateway } from './helpers/gateway.js';

/**
 * The dashboard's small things, in Debian's Chromium against a real gateway in front of the
 * OpenAI fake: money with sensible precision, the playground's history and failures, the
 * request log and usage pages' layout and errors, dialogs' focus, form labels and the agent
 * pickers. Screenshots go to test-artifacts/dashboard/.
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const ADMIN = { email: 'admin@example.com', password: 'admin password 0123' };

let rig: DashboardRig;
let gateway: TestGateway;
let fake: OpenAIFake;
let browser: Browser;
const problems: string[] = [];

const newPage = (viewport?: { width: number; height: number }) => watchedPage(browser, gateway.url, problems, viewport);
const shoot = (page: Page, name: string) => shootInto(page, SCREENSHOTS, name);

async function signedIn(viewport?: { width: number; height: number }): Promise<Page> {
  const page = await newPage(viewport);
  await signInAs(page, gateway.url, ADMIN);
  return page;
}

/** The JSON body of a curl snippet (`-d '…'`). */
function curlBody(curl: string): { messages: { role: string; content: unknown }[] } {
  const data = /-d '(.*)'$/s.exec(curl);
  assert.ok(data !== null, `a body in ${curl}`);
  return JSON.parse(data[1]!.replace(/'\\''/g, "'"));
}

describe('dashboard rough edges in a browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    rig = await startDashboardRig();
    ({ gateway, browser, fake } = rig);
    await gateway.gateway.context.accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
  });
  after(async () => {
    await rig?.close();
  });

  /** Log records of eight models with long names, one costing a thousandth of another's cost; a few failed with long error codes. */
  let manyModels: Promise<string[]> | undefined;
  const recordsOfManyModels = () => (manyModels ??= writeRecordsOfManyModels());
  async function writeRecordsOfManyModels(): Promise<string[]> {
    const models = ['anthropic.claude-3-5-sonnet-20241022-v2:0', 'gemini-2.5-flash-preview-native-audio', 'gpt-4o-mini-transcribe', 'text-embedding-3-large', 'mistral-large-2411', 'gpt-4o-2024-11-20', 'claude-opus-4-1-20250805', 'o4-mini-deep-research'];
    const now = Date.now();
    await gateway.gateway.context.logs.store.insertBatch(
      models.map((model, index) => ({
        request_id: `req_many${index}`,
        started_at: now - 3_600_000 + index,
        endpoint: index % 2 === 0 ? '/v1/audio/transcriptions' : '/v1/images/generations',
        platform: 'dashboard-playground-with-a-long-name',
        key_id: 'key_26eb466588167886',
        fingerprint: 'key_26eb466588167886…w2Xk',
        requested_model: model,
        resolved_model: model,
        status: index % 3 === 0 ? 429 : 200,
        error_code: index % 3 === 0 ? 'upstream_rate_limited_for_a_long_while' : null,
        latency_ms: 123_456 + index,
        streaming: 0,
        total_tokens: 1_234_567,
        cost_micro_usd: index === 0 ? 1_000 : 1_000_000 + index * 250_000,
      })),
    );
    return models;
  }

  test("a key's monthly cost reads in dollars and cents, not six decimals", async () => {
    await gateway.admin('POST', '/admin/v1/keys', { name: 'budgeted-key', scopes: ['model:request'], limits: { monthly_cost_usd: 5 } });
    const page = await signedIn();
    await page.goto(`${gateway.url}/dashboard/keys?q=budgeted`);
    const row = page.getByRole('row').filter({ hasText: 'budgeted-key' });
    await row.getByText('$0.00 of $5.00').waitFor();
    assert.doesNotMatch(await row.innerText(), /0\.000000/);
    await page.context().close();
  });

  test('the playground: Show code adds no empty turn, a failed turn leaves the history and links its record', async () => {
    const made = await gateway.admin('POST', '/admin/v1/keys', { name: 'playground-key', scopes: ['model:request'] });
    const page = await signedIn();
    await page.goto(`${gateway.url}/dashboard/playground`);
    await page.getByLabel('Find a key').fill('playground-key');
    await page.getByLabel('Calls are made as the key').selectOption(made.body.id);
    await page.getByRole('tab', { name: 'Chat' }).click();
    await page.getByLabel('Stream the answer').uncheck();

    // A call that fails: its error links the log record, and the message is back in the box, not in the history.
    fake.failNext('/v1/chat/completions', 400, 'The fake refuses this one.');
    await page.getByLabel('Message').fill('First question');
    await page.getByRole('button', { name: 'Send' }).click();
    const transcript = page.getByRole('region', { name: 'Conversation' });
    await transcript.getByRole('alert').filter({ hasText: 'The fake refuses this one.' }).waitFor();
    const link = transcript.getByRole('link', { name: /^req_/ });
    const failedId = await link.innerText();
    assert.equal(await transcript.locator('.turn.user').count(), 0, 'the failed turn is not in the history');
    assert.equal(await page.getByLabel('Message').inputValue(), 'First question');
    await shoot(page, 'playground-failed-turn');

    // Sent again: one user message reaches the provider, not two in a row.
    fake.scriptChat({ kind: 'reply', text: 'An answer at last.', usage: { promptTokens: 5, completionTokens: 4 } });
    await page.getByRole('button', { name: 'Send' }).click();
    await transcript.locator('.turn.assistant').filter({ hasText: 'An answer at last.' }).waitFor();
    const upstream = fake.server.requests.filter((request) => request.path === '/v1/chat/completions').at(-1)!;
    assert.deepEqual(
      (upstream.json.messages as { role: string }[]).map((message) => message.role),
      ['user'],
    );

    // Show code with an empty message box: the conversation so far, no empty user turn after it.
    await page.getByRole('button', { name: 'Show code' }).click();
    const body = curlBody(await page.getByLabel('curl', { exact: true }).innerText());
    assert.deepEqual(
      body.messages.map((message) => message.role),
      ['user', 'assistant'],
    );

    // The failed call's link opens its record.
    await page.goto(`${gateway.url}/dashboard/logs/${failedId}`);
    await page.getByRole('heading', { name: `Request ${failedId}` }).waitFor();
    await page.context().close();
  });

  test('the request log fits 1366 px with its Latency column; a bad filter replaces the old results', async () => {
    await recordsOfManyModels();
    const page = await signedIn({ width: 1366, height: 768 });
    await page.goto(`${gateway.url}/dashboard/logs`);
    const table = page.getByRole('region', { name: 'Request log, newest first' });
    await table.getByRole('row').filter({ hasText: 'o4-mini-deep-research' }).waitFor();
    const fits = await table.evaluate((region) => region.scrollWidth <= region.clientWidth);
    await shoot(page, 'logs-1366');
    assert.ok(fits, 'the table needs no sideways scrolling at 1366 px');
    const latency = await table.getByRole('columnheader', { name: 'Latency' }).boundingBox();
    const box = await table.boundingBox();
    assert.ok(latency !== null && box !== null && latency.x + latency.width <= box.x + box.width, 'the Latency column is in view');

    await page.getByLabel('Since').fill('last tuesday');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('alert').filter({ hasText: /since/ }).waitFor();
    assert.equal(await page.getByRole('row').filter({ hasText: 'o4-mini-deep-research' }).count(), 0, 'the old results are gone');
    await page.context().close();
  });

  test('usage: a bad URL shows its error without "Loading…"; every chart label shows and a small bar is visible', async () => {
    const models = await recordsOfManyModels();
    const page = await signedIn();
    await page.goto(`${gateway.url}/dashboard/usage?since=last-tuesday`);
    await page.getByRole('alert').waitFor();
    assert.equal(await page.getByText('Loading…').count(), 0);

    await page.goto(`${gateway.url}/dashboard/usage?since=1d&by=model&metric=cost_usd`);
    await page.locator(`tr[data-group="${models[0]}"]`).waitFor();
    const rows = await page.locator('.usage-table tbody tr').count();
    const chart = page.getByRole('figure');
    await chart.locator('.recharts-bar-rectangle').first().waitFor();
    const labels = await chart.locator('.recharts-xAxis .recharts-cartesian-axis-tick').count();
    assert.equal(labels, rows, 'a label under every bar');
    const heights = await chart.locator('.recharts-bar-rectangle path').evaluateAll((paths) => paths.map((path) => path.getBoundingClientRect().height));
    assert.equal(heights.length, rows, 'a bar for every group');
    assert.ok(heights.every((height) => height >= 2), `every bar can be seen: ${heights.join(', ')}`);
    await shoot(page, 'usage-many-models');
    await page.context().close();
  });

  test('the create-key dialog: Escape gives focus back to its button; an error under a field moves no field', async () => {
    const page = await signedIn();
    await page.goto(`${gateway.url}/dashboard/keys`);
    const opener = page.getByRole('button', { name: 'Create key' });
    await opener.click();
    const dialog = page.getByRole('dialog', { name: 'Create a key' });
    const tokens = dialog.getByLabel('Tokens per UTC day');
    const widths = async () => Promise.all(['Requests per minute', 'Tokens per UTC day', 'Cost per UTC month (USD)'].map(async (label) => (await dialog.getByLabel(label).boundingBox())!.width));
    const before = await widths();
    await tokens.fill('abc');
    await dialog.getByText('a whole number of 1 or more').waitFor();
    assert.deepEqual(await widths(), before, 'the fields keep their widths when an error appears');
    await shoot(page, 'keys-create-error');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await opener.evaluate((button) => button === button.ownerDocument.activeElement), true, 'focus is back on Create key');
    await page.context().close();
  });

  test('the agent form: labels in words, the images checkbox beside its label, an unlinked llm node reported', async () => {
    const page = await signedIn();
    await page.goto(`${gateway.url}/dashboard/agents`);
    await page.getByLabel('New agent slug').fill('labels');
    await page.getByRole('button', { name: 'New agent' }).click();
    await page.locator('.react-flow__node[data-id="input"]').waitFor();
    await page.locator('.status-line').getByText('Valid.').waitFor();
    await page.getByRole('navigation', { name: 'Node types' }).getByRole('button', { name: 'llm', exact: true }).click();
    await page.locator('.react-flow__node[data-id="llm"]').waitFor();
    for (const label of ['Model', 'System prompt', 'Include earlier turns', 'Max tokens']) await page.getByLabel(label, { exact: true }).waitFor();
    assert.equal(await page.getByLabel('includeHistory', { exact: true }).count(), 0);
    assert.equal(await page.getByLabel('maxTokens', { exact: true }).count(), 0);

    const checkbox = page.getByRole('checkbox', { name: 'Only models that take images' });
    const box = (await checkbox.boundingBox())!;
    const label = (await page.locator('label.check').filter({ has: checkbox }).boundingBox())!;
    assert.ok(box.width < 30, `the checkbox is its own size (${box.width} px), not the field's`);
    assert.ok(label.height < 2.5 * box.height, 'checkbox and text sit on one line');

    // Not linked from the input: a problem on the llm node, not "No problems".
    await page.getByLabel('Model', { exact: true }).selectOption('gpt-4o-mini');
    const problemsList = page.getByRole('region', { name: 'Problems' });
    await problemsList.getByText(/no path from the entry "input" leads to this node/).waitFor();
    assert.equal(await problemsList.getByText('No problems').count(), 0);
    await shoot(page, 'agents-unlinked-node');
    await page.context().close();
  });

  test('the agent pickers offer only keys that may run it; a grant given in the page adds a key of another project', async () => {
    await gateway.admin('POST', '/admin/v1/projects', { id: 'elsewhere', name: 'Elsewhere' });
    const key = (name: string, project: string, scopes: string[]) => gateway.admin('POST', '/admin/v1/keys', { name, project, scopes });
    const own = (await key('own-runner', 'default', ['agents:execute'])).body;
    const noScope = (await key('model-only', 'default', ['model:request'])).body;
    const stranger = (await key('stranger-runner', 'elsewhere', ['agents:execute'])).body;
    const graph = {
      version: 1,
      name: 'Picky',
      entry: 'input',
      nodes: [
        { id: 'input', type: 'input', next: 'out' },
        { id: 'out', type: 'output', config: { text: '{{input}}' } },
      ],
    };
    assert.equal((await gateway.admin('PUT', '/admin/v1/agents/picky', { graph })).status, 200);

    const page = await signedIn({ width: 1440, height: 900 });
    await page.goto(`${gateway.url}/dashboard/agents/picky`);
    await page.getByRole('tab', { name: 'Test' }).click();
    const offered = async (label: string) => {
      const picker = page.getByLabel(label);
      await picker.locator(`option[value="${own.id}"]`).waitFor({ state: 'attached' });
      return picker.locator('option').evaluateAll((options) => options.map((option) => (option as unknown as { value: string }).value));
    };
    const tested = await offered('Key (metered and logged)');
    assert.ok(tested.includes(own.id));
    assert.ok(!tested.includes(noScope.id), 'a key without agents:execute is not offered');
    assert.ok(!tested.includes(stranger.id), "a key of another project without a grant is not offered");

    // A grant, given under Publish, through the admin API's grant route.
    await page.getByRole('tab', { name: 'Publish' }).click();
    await page.getByRole('heading', { name: 'Grants' }).waitFor();
    await page.getByLabel('Key to grant').selectOption(stranger.id);
    await page.getByRole('button', { name: 'Grant', exact: true }).click();
    await page.getByRole('list', { name: 'Keys granted' }).getByText(stranger.id).waitFor();
    assert.deepEqual((await gateway.admin('GET', '/admin/v1/agents/picky/grants')).body.data.map((grant: { key_id: string }) => grant.key_id), [stranger.id]);
    await shoot(page, 'agents-grants');

    await page.getByRole('tab', { name: 'Conversations' }).click();
    const shown = await offered('As the key');
    assert.ok(shown.includes(stranger.id), 'the granted key is offered now');
    assert.ok(!shown.includes(noScope.id));

    // Withdrawn: gone from the grants.
    await page.getByRole('tab', { name: 'Publish' }).click();
    await page.getByRole('list', { name: 'Keys granted' }).getByRole('button', { name: 'Withdraw' }).click();
    await page.getByText('No grants.').waitFor();
    assert.deepEqual((await gateway.admin('GET', '/admin/v1/agents/picky/grants')).body.data, []);
    await page.context().close();
  });
});
