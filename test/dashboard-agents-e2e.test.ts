import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import type { Browser, Locator, Page } from 'playwright-core';
import type { OpenAIFake } from './fakes/openai.js';
import { PAINTER_GRAPH } from './helpers/agents.js';
import { CHROMIUM, signIn, startDashboardRig, watchedPage, type DashboardRig } from './helpers/dashboard-browser.js';
import type { TestGateway } from './helpers/gateway.js';

/**
 * The agent graph editor in Debian's Chromium, against a real gateway in front of the OpenAI
 * fake: a graph input → llm (structured output) → condition → two outputs built on the
 * canvas, a validation problem pinned to its node and fixed, save, a test conversation as a
 * key, publish, the run endpoint called with the official SDK, a second draft with its diff,
 * rollback, and JSON export/import that leaves a CLI file unchanged.
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const ADMIN = { email: 'author@example.com', password: 'author password 0123' };
const ON_TOPIC = { kind: 'reply', text: '{"on_topic": true}', usage: { promptTokens: 21, completionTokens: 6 } } as const;

let rig: DashboardRig;
let fake: OpenAIFake;
let gateway: TestGateway;
let browser: Browser;
let secret: string;
const problems: string[] = [];

async function newPage(): Promise<Page> {
  const page = await watchedPage(browser, gateway.url, problems, { width: 1440, height: 900 });
  // The editor's first look-up of an agent not saved yet is a 404 (noted in the console);
  // every other answer of 400 or more is a problem.
  page.on('response', (response) => {
    const expected = response.url().endsWith('/admin/v1/session') || /\/admin\/v1\/agents\/[a-z]+$/.test(response.url());
    if (response.status() >= 400 && !expected) problems.push(`${response.status()} ${response.url()}`);
  });
  return page;
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

const canvasNode = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
const palette = (page: Page, type: string) => page.getByRole('navigation', { name: 'Node types' }).getByRole('button', { name: type, exact: true });
const status = (page: Page) => page.locator('.status-line');

/** Where an element is once the canvas stopped moving (fit view and layout may still be animating). */
async function settledBox(locator: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
  let previous = await locator.boundingBox();
  for (let attempt = 0; attempt < 50; attempt += 1) {
    await new Promise((done) => setTimeout(done, 100));
    const box = await locator.boundingBox();
    if (box !== null && JSON.stringify(box) === JSON.stringify(previous)) return box;
    previous = box;
  }
  throw new Error('the canvas did not settle');
}

async function exported(page: Page): Promise<unknown> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
  return JSON.parse(readFileSync((await download.path())!, 'utf8'));
}

describe('agent graph editor in a browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    rig = await startDashboardRig();
    ({ fake, gateway, browser } = rig);
    await gateway.gateway.context.accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
    secret = await gateway.createKey({ scopes: ['agents:execute'] });
  });
  after(async () => {
    await rig?.close();
  });

  test('build, validate, save, test, publish, run, roll back, export and import', async () => {
    const page = await newPage();
    await signIn(page, gateway.url, ADMIN);
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByLabel('New agent slug').fill('triage');
    await page.getByRole('button', { name: 'New agent' }).click();
    await canvasNode(page, 'input').waitFor();
    await status(page).getByText('Valid.').waitFor();
    // React Flow's own stylesheet came with the dashboard's (the CSP refuses inline styles).
    assert.equal(await canvasNode(page, 'input').evaluate((node) => node.ownerDocument.defaultView!.getComputedStyle(node).position), 'absolute');

    // A variable, then an llm node with a structured output; its system prompt uses the autocomplete.
    await page.getByRole('tab', { name: 'Graph' }).click();
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.getByLabel('Variable 1 name').fill('subject');
    await page.getByLabel('Variable 1 value').fill('maths');
    await palette(page, 'llm').click();
    await canvasNode(page, 'llm').waitFor();
    await page.getByLabel('Model', { exact: true }).selectOption('gpt-4o-mini');
    const system = page.getByLabel('System prompt', { exact: true });
    await system.click();
    await system.pressSequentially('Is this about {{vars.su');
    await page.getByRole('option', { name: '{{vars.subject}}' }).waitFor();
    await system.press('Enter');
    await system.pressSequentially('? {{in');
    await page.getByRole('option', { name: '{{input}}' }).waitFor();
    await system.press('Enter');
    assert.equal(await system.inputValue(), 'Is this about {{vars.subject}}? {{input}}');
    await page.getByRole('button', { name: 'Add output field' }).click();
    await page.getByLabel('Output 1 name').fill('on_topic');
    await page.getByLabel('Output 1 type').selectOption('boolean');

    // A condition reading a field the llm does not declare, and a second output.
    await palette(page, 'condition').click();
    await page.getByLabel('Value tested', { exact: true }).fill('llm.json.topic');
    await page.getByLabel('Comparison', { exact: true }).selectOption('truthy');
    await page.getByLabel('branch true').selectOption('out');
    await palette(page, 'output').click();
    await page.getByLabel('Answer (required)').fill('I only answer maths questions.');
    await canvasNode(page, 'condition').click();
    await page.getByLabel('branch false').selectOption('output');
    await canvasNode(page, 'out').click();
    await page.getByLabel('Answer (required)').fill('Maths: {{input}}');
    await canvasNode(page, 'input').click();
    await page.getByLabel('next', { exact: true }).selectOption('llm');

    // The last link is drawn on the canvas: llm's next handle onto the condition.
    await page.getByRole('button', { name: 'Auto-layout' }).click();
    await page.getByRole('button', { name: 'Fit View' }).click();
    const from = await settledBox(canvasNode(page, 'llm').locator('.react-flow__handle.source'));
    const to = await settledBox(canvasNode(page, 'condition').locator('.react-flow__handle.target'));
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.down();
    await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 8 });
    await page.mouse.up();

    await page.locator('.react-flow__edge[data-id="llm:next"]').waitFor({ state: 'attached' });
    await page.getByRole('button', { name: 'Auto-layout' }).click();
    await page.getByRole('button', { name: 'Fit View' }).click();

    // The one problem left is pinned to the condition node and its field.
    await status(page).getByText('1 problem.').waitFor();
    await canvasNode(page, 'condition').getByText('1 problem').waitFor();
    await canvasNode(page, 'condition').click();
    await page.locator('#field-condition-field-problems').getByText('reads llm.json.topic, but node "llm" declares only on_topic').waitFor();
    assert.equal(await page.getByLabel('Value tested', { exact: true }).getAttribute('aria-invalid'), 'true');
    await shoot(page, 'agents-editor-problem');
    await page.getByLabel('Value tested', { exact: true }).fill('llm.json.on_topic');
    await status(page).getByText('Valid.').waitFor();
    assert.equal(await canvasNode(page, 'condition').getByText('1 problem').count(), 0);

    // Undo brings a deleted node back, redo deletes it again; copy and paste make a copy.
    await canvasNode(page, 'output').click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await canvasNode(page, 'output').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Undo' }).click();
    await canvasNode(page, 'output').waitFor();
    await page.getByRole('button', { name: 'Redo' }).click();
    await canvasNode(page, 'output').waitFor({ state: 'detached' });
    await page.keyboard.press('Control+z');
    await canvasNode(page, 'output').click();
    await page.keyboard.press('Control+c');
    await page.keyboard.press('Control+v');
    await canvasNode(page, 'output_2').waitFor();
    await page.keyboard.press('Control+z');
    await canvasNode(page, 'output_2').waitFor({ state: 'detached' });
    await status(page).getByText('Valid.').waitFor();

    await page.getByRole('button', { name: 'Save draft' }).click();
    await status(page).getByText('Saved as draft 1.').waitFor();
    await shoot(page, 'agents-editor');
    const saved = (await gateway.admin('GET', '/admin/v1/agents/triage')).body;
    assert.deepEqual(
      saved.draft.graph.nodes.map((node: { id: string; next?: string; branches?: object }) => [node.id, node.next ?? node.branches ?? null]),
      [
        ['input', 'llm'],
        ['out', null],
        ['llm', 'condition'],
        ['condition', { true: 'out', false: 'output' }],
        ['output', null],
      ],
    );
    assert.deepEqual(saved.draft.graph.variables, { subject: 'maths' });
    assert.ok(saved.draft.graph.nodes.every((node: { x?: unknown; y?: unknown }) => typeof node.x === 'number' && typeof node.y === 'number'), 'positions kept in the graph');

    // Test, two turns of one conversation, as the key.
    fake.scriptChat(ON_TOPIC);
    await page.getByRole('tab', { name: 'Test' }).click();
    await page.getByLabel('First message').fill('What is a prime?');
    await page.getByRole('button', { name: 'Run test turn' }).click();
    await page.locator('output').filter({ hasText: 'Maths: What is a prime?' }).waitFor();
    const step = page.getByLabel('Trace').first().locator('li').filter({ hasText: 'gpt-4o-mini' });
    await step.getByText('27 tokens').waitFor();
    await step.locator('summary').click();
    await step.getByText('"on_topic": true').first().waitFor();
    await step.getByText('"system": "Is this about maths? What is a prime?"').waitFor();
    await page.getByLabel('Next message').fill('And 7?');
    await page.getByRole('button', { name: 'Run test turn' }).click();
    await page.locator('output').filter({ hasText: 'Maths: And 7?' }).waitFor();
    await shoot(page, 'agents-test');
    const chats = fake.server.requests.filter((request) => request.path.endsWith('/chat/completions'));
    const lastBody = chats.at(-1)!.json as { messages: { role: string; content: unknown }[] };
    assert.deepEqual(lastBody.messages.map((message) => message.role), ['system', 'user', 'assistant', 'user'], 'the second turn saw the first');
    await gateway.gateway.context.logs.writer.flush();
    const logged = (await gateway.admin('GET', '/admin/v1/logs?endpoint=/admin/v1/agents/:slug/test')).body.data;
    assert.equal(logged.length, 2, 'both test turns are in the request log');

    // Publish, then the run endpoint through the official SDK answers the same.
    await page.getByRole('tab', { name: 'Publish' }).click();
    await page.getByRole('button', { name: 'Publish draft 1' }).click();
    await page.getByText('Live: version 1 (draft 1).').waitFor();
    await page.getByText(`${gateway.url}/v1/agents/triage/runs`).first().waitFor();
    await shoot(page, 'agents-publish');
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: secret, maxRetries: 0 });
    type Run = { output: { text: string }; conversation_id: string; agent: { version: number; draft_version: number } };
    const first = await client.post<Run>('/agents/triage/runs', { body: { input: 'What is a prime?' } });
    assert.equal(first.output.text, 'Maths: What is a prime?');
    const second = await client.post<Run>('/agents/triage/runs', { body: { input: 'And 7?', conversation_id: first.conversation_id } });
    assert.equal(second.output.text, 'Maths: And 7?');
    assert.equal(second.conversation_id, first.conversation_id);

    // A second draft, published, with its diff; then one click rolls back to version 1.
    await page.getByRole('tab', { name: 'Node' }).click();
    await canvasNode(page, 'out').click();
    await page.getByLabel('Answer (required)').fill('Maths, v2: {{input}}');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await status(page).getByText('Saved as draft 2.').waitFor();
    await page.getByRole('tab', { name: 'Publish' }).click();
    await page.getByRole('button', { name: 'Publish draft 2' }).click();
    await page.getByText('Live: version 2 (draft 2).').waitFor();
    await page.getByLabel('Changes from draft 1 to draft 2').locator('ins').filter({ hasText: 'Maths, v2: {{input}}' }).waitFor();
    await page.getByLabel('Changes from draft 1 to draft 2').locator('del').filter({ hasText: '"text": "Maths: {{input}}"' }).waitFor();
    assert.equal((await client.post<Run>('/agents/triage/runs', { body: { input: 'x' } })).output.text, 'Maths, v2: x');
    await page.getByRole('button', { name: 'Roll back to version 1' }).click();
    await page.getByText('Live: version 3 (draft 1).').waitFor();
    await page.getByRole('heading', { name: 'Versions' }).evaluate((heading) => heading.scrollIntoView());
    await shoot(page, 'agents-versions');
    const rolledBack = await client.post<Run>('/agents/triage/runs', { body: { input: 'x' } });
    assert.equal(rolledBack.output.text, 'Maths: x');
    assert.deepEqual([rolledBack.agent.version, rolledBack.agent.draft_version], [3, 1]);

    // The key's conversation through the run endpoint, as that key sees it.
    await page.getByRole('tab', { name: 'Conversations' }).click();
    await page.getByRole('button', { name: first.conversation_id }).click();
    const conversation = page.getByLabel(`Conversation ${first.conversation_id}`);
    await conversation.getByText('Maths: And 7?').waitFor();
    assert.equal(await conversation.locator('li').count(), 4);
    await shoot(page, 'agents-conversations');

    // Export is the saved graph; a CLI file (no positions, its own key order) imports and exports unchanged.
    assert.deepEqual(await exported(page), (await gateway.admin('GET', '/admin/v1/agents/triage/drafts/2')).body.graph);
    const cliFile = {
      name: 'From the CLI',
      version: 1,
      variables: { persona: 'a patient tutor' },
      entry: 'input',
      nodes: [
        { id: 'input', type: 'input', next: 'answer' },
        { type: 'llm', id: 'answer', config: { system: 'You are {{vars.persona}}.', model: 'gpt-4o-mini' }, next: 'out' },
        { id: 'out', type: 'output', config: { text: '{{answer.content}}' } },
      ],
      edges: [],
    };
    await page.getByLabel('Graph file to import').setInputFiles({ name: 'tutor.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(cliFile)) });
    await canvasNode(page, 'answer').waitFor();
    await status(page).getByText('Valid.').waitFor();
    assert.equal(JSON.stringify(await exported(page)), JSON.stringify(cliFile));

    await page.context().close();
    assert.deepEqual(problems.filter((problem) => !/^console: .*status of 404/.test(problem)), []);
  });

  test('leaving with unsaved changes asks first; an untouched or saved graph leaves at once', async () => {
    const page = await newPage();
    await signIn(page, gateway.url, ADMIN);
    const nav = page.getByRole('navigation', { name: 'Dashboard' });
    const leaveDialog = page.getByRole('alertdialog', { name: 'Leave without saving?' });
    await page.goto(`${gateway.url}/dashboard/agents/notes`);
    await status(page).getByText('Valid.').waitFor();
    // The starter graph of an agent not saved yet: nothing to lose.
    await nav.getByRole('link', { name: 'Request log' }).click();
    await page.waitForURL('**/dashboard/logs');

    await page.goto(`${gateway.url}/dashboard/agents/notes`);
    await status(page).getByText('Valid.').waitFor();
    await palette(page, 'llm').click();
    await canvasNode(page, 'llm').waitFor();
    await nav.getByRole('link', { name: 'Request log' }).click();
    await leaveDialog.waitFor();
    await leaveDialog.getByRole('button', { name: 'Stay' }).click();
    await leaveDialog.waitFor({ state: 'detached' });
    assert.match(page.url(), /\/dashboard\/agents\/notes$/);
    await canvasNode(page, 'llm').waitFor();

    // Reloading asks through the browser's own prompt; dismissed, the edit is still there.
    const prompted = page.waitForEvent('dialog');
    const reload = page.reload().catch(() => undefined);
    const prompt = await prompted;
    assert.equal(prompt.type(), 'beforeunload');
    await prompt.dismiss();
    await reload;
    await canvasNode(page, 'llm').waitFor();

    await nav.getByRole('link', { name: 'Request log' }).click();
    await leaveDialog.getByRole('button', { name: 'Leave' }).click();
    await page.waitForURL('**/dashboard/logs');

    // Saved, the draft leaves without a question.
    await page.goto(`${gateway.url}/dashboard/agents/notes`);
    await status(page).getByText('Valid.').waitFor();
    await page.getByRole('button', { name: 'Save draft' }).click();
    await status(page).getByText('Saved as draft 1.').waitFor();
    await nav.getByRole('link', { name: 'Request log' }).click();
    await page.waitForURL('**/dashboard/logs');
    await page.context().close();
    assert.deepEqual(problems.filter((problem) => !/^console: .*status of 404/.test(problem)), []);
  });

  test('a test turn shows the images an image node made', async () => {
    const page = await newPage();
    await signIn(page, gateway.url, ADMIN);
    await page.goto(`${gateway.url}/dashboard/agents/painter`);
    await page.getByLabel('Graph file to import').setInputFiles({ name: 'painter.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(PAINTER_GRAPH)) });
    await status(page).getByText('Valid.').waitFor();
    await page.getByRole('button', { name: 'Save draft' }).click();
    await status(page).getByText('Saved as draft 1.').waitFor();
    await page.getByRole('tab', { name: 'Test' }).click();
    await page.getByLabel('First message').fill('a cat');
    await page.getByRole('button', { name: 'Run test turn' }).click();
    const image = page.getByRole('img', { name: /^attachment asset_/ });
    await image.waitFor();
    await page.waitForFunction((element) => element !== null && (element as { complete: boolean; naturalWidth: number }).complete && (element as { naturalWidth: number }).naturalWidth > 0, await image.elementHandle());
    await page.getByLabel('Trace').locator('li').filter({ hasText: 'gpt-image-1' }).locator('summary').click();
    await page.getByText('A drawing of a cat').waitFor();
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'painter', exact: true }).waitFor();
    await shoot(page, 'agents-list');
    await page.context().close();

    // On a phone the editor stacks palette, canvas and panel, and nothing is wider than the screen.
    const phone = await watchedPage(browser, gateway.url, problems, { width: 390, height: 844 });
    await signIn(phone, gateway.url, ADMIN);
    await phone.goto(`${gateway.url}/dashboard/agents/painter`);
    await canvasNode(phone, 'paint').waitFor();
    await status(phone).getByText('Valid.').waitFor();
    assert.equal(await phone.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), true);
    await phone.screenshot({ path: join(SCREENSHOTS, 'agents-phone.png'), fullPage: true });
    await phone.context().close();
    assert.deepEqual(problems.filter((problem) => !/^console: .*status of 404/.test(problem)), []);
  });
});
