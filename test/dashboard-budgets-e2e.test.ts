import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { accessibilityViolations, CHROMIUM, CHROMIUM_ARGS, shoot, signIn, watchedPage } from './helpers/dashboard-browser.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * The Budgets page in Debian's Chromium: an administrator creates a budget on a team (picked
 * from the teams), sees the gateway's refusal of a time zone next to that field, edits the
 * budget, sees what a request spent against it and the alert it raised, and deletes it after a
 * confirmation; a viewer reads the page without the forms; a team admin sees its team's budgets
 * only and sets those of its projects and keys. The overview shows the budget nearest its
 * limit. axe-core finds no serious or critical violation.
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const ADMIN = { email: 'budgets-admin@example.com', password: 'admin password 0123' };
const VIEWER = { email: 'budgets-viewer@example.com', password: 'viewer password 0123' };
const LEAD = { email: 'budgets-lead@example.com', password: 'team admin password 0123' };

let fake: OpenAIFake;
let gateway: TestGateway;
let browser: Browser;
let secret: string;
const problems: string[] = [];

describe('the Budgets page in a browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789' } });
    assert.equal((await gateway.admin('POST', '/admin/v1/teams', { id: 'red', name: 'Red' })).status, 201);
    assert.equal((await gateway.admin('POST', '/admin/v1/projects', { id: 'studio', name: 'Studio', team_id: 'red' })).status, 201);
    const key = await gateway.admin('POST', '/admin/v1/keys', { name: 'studio key', project: 'studio', scopes: ['model:request'] });
    assert.equal(key.status, 201);
    secret = key.body.secret as string;
    await gateway.gateway.context.accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
    await gateway.gateway.context.accounts.createUser(VIEWER.email, VIEWER.password, 'viewer');
    await gateway.gateway.context.accounts.createUser(LEAD.email, LEAD.password, 'team_admin', ['red']);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
    await fake?.close();
  });

  test('an admin creates, edits and deletes a budget, and sees its spend and alert', async () => {
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, ADMIN);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Budgets' }).click();
    await page.getByText('No budget yet.').waitFor();

    await page.getByLabel('Level').selectOption('team');
    await page.locator('#budget-target option[value="red"]').waitFor({ state: 'attached' });
    await page.getByLabel('Target team').selectOption('red');
    await page.getByLabel('Tokens per period').fill('50');
    await page.getByLabel('Reset time zone').fill('Mars/Olympus');
    await page.getByRole('button', { name: 'Create budget' }).click();
    // The refusal is shown by the field it names, and tied to it for screen readers.
    await page.locator('#budget-reset-tz-error').getByText(/Mars\/Olympus.*not a time zone/).waitFor();
    assert.match((await page.getByLabel('Reset time zone').getAttribute('aria-describedby')) ?? '', /budget-reset-tz-error/);
    await page.getByLabel('Reset time zone').fill('Europe/Berlin');
    await page.getByRole('button', { name: 'Create budget' }).click();

    const budgets = (await gateway.admin('GET', '/admin/v1/budgets')).body.data as { id: string; target: string }[];
    const row = page.locator('tr[data-budget]').filter({ hasText: 'red' });
    await row.getByText('0 of 50').waitFor();
    await row.getByText('Europe/Berlin').waitFor();
    assert.equal(budgets.length, 1);

    await row.getByRole('button', { name: 'Edit the budget of the team red' }).click();
    const form = page.getByRole('form', { name: 'Edit the budget of the team red' });
    await form.getByLabel('Tokens per period').fill('500');
    await form.getByLabel('USD per period').fill('5');
    await form.getByLabel('Alert thresholds (%)').fill('1, 150');
    await form.getByRole('button', { name: 'Save budget' }).click();
    // The schema's refusal names `thresholds[1]`: it goes next to the thresholds field.
    await form.locator(`#edit-${budgets[0]!.id}-thresholds-error`).getByText(/thresholds\[1\]/).waitFor();
    await form.getByLabel('Alert thresholds (%)').fill('1');
    await form.getByRole('button', { name: 'Save budget' }).click();
    await row.getByText('0 of 500').waitFor();
    await row.getByText('$0.00 of $5.00').waitFor();
    await row.getByText('1%', { exact: true }).waitFor();

    // A request of the team's project: spend against the budget, and the 1% alert (no webhook set).
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 200);
    await response.text();
    await loggedRecord(gateway, response.headers.get('x-request-id')!);
    // The alert is raised as the request settles, just after its answer.
    let alerts: { state: string }[] = [];
    for (let attempt = 0; attempt < 200 && alerts.length === 0; attempt += 1) {
      if (attempt > 0) await new Promise((done) => setTimeout(done, 25));
      alerts = (await gateway.admin('GET', '/admin/v1/budgets/alerts')).body.data as { state: string }[];
    }
    assert.deepEqual(alerts.map((alert) => alert.state), ['no_webhook']);
    await page.reload();
    await row.waitFor();
    assert.doesNotMatch(await row.locator('td').nth(2).innerText(), /^0 of/);
    const alertRow = page.getByRole('table', { name: 'Alerts' }).locator('tr[data-alert]');
    await alertRow.getByText('no webhook').waitFor();
    await alertRow.getByText('team red').waitFor();
    assert.deepEqual(await accessibilityViolations(page), []);
    await shoot(page, SCREENSHOTS, 'budgets');

    await page.goto(`${gateway.url}/dashboard/overview`);
    await page.getByRole('table', { name: 'Budgets nearest their limit' }).getByText('team red').waitFor();
    await page.getByRole('table', { name: 'Top teams' }).getByText('Red').waitFor();

    await page.goto(`${gateway.url}/dashboard/budgets`);
    await row.getByRole('button', { name: 'Delete the budget of the team red' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    assert.deepEqual((await gateway.admin('GET', '/admin/v1/budgets')).body.data, []);
    // The refused create and edit are the failed calls the browser reports.
    const refused = 'console: Failed to load resource: the server responded with a status of 400 (Bad Request)';
    assert.deepEqual(problems.splice(0), [refused, refused]);
  });

  test('a viewer reads the budgets without the forms', async () => {
    assert.equal((await gateway.admin('POST', '/admin/v1/budgets', { level: 'end_user', target: 'student-9', period: 'day', usd: 2 })).status, 201);
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, VIEWER);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Budgets' }).click();
    await page.locator('tr[data-budget]').getByText('student-9').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create budget' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Edit|^Delete/ }).count(), 0);
    assert.deepEqual(await accessibilityViolations(page), []);
    assert.deepEqual(problems, []);
  });

  test("a team admin sees its team's budgets only and sets its projects' and keys'", async () => {
    assert.equal((await gateway.admin('POST', '/admin/v1/teams', { id: 'blue', name: 'Blue' })).status, 201);
    assert.equal((await gateway.admin('POST', '/admin/v1/projects', { id: 'harbor', name: 'Harbor', team_id: 'blue' })).status, 201);
    for (const [level, target] of [['team', 'red'], ['project', 'harbor']] as const) {
      assert.equal((await gateway.admin('POST', '/admin/v1/budgets', { level, target, period: 'month', usd: 100 })).status, 201);
    }
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, LEAD);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Budgets' }).click();
    const teamRow = page.locator('tr[data-budget]').filter({ hasText: 'red' });
    await teamRow.waitFor();
    // Its team's own budget is an administrator's: shown, not offered to change.
    assert.equal(await teamRow.getByRole('button').count(), 0);
    // Another team's project and the end user are not its own.
    assert.equal(await page.locator('tr[data-budget]').count(), 1);
    assert.deepEqual(await page.getByLabel('Level').locator('option').allInnerTexts(), ['project', 'key']);

    await page.getByLabel('Level').selectOption('project');
    await page.locator('#budget-target option[value="studio"]').waitFor({ state: 'attached' });
    // The picker offers its teams' projects only.
    assert.deepEqual(await page.locator('#budget-target option').evaluateAll((options) => options.map((option) => (option as unknown as { value: string }).value)), ['studio']);
    await page.getByLabel('USD per period').fill('3');
    await page.getByRole('button', { name: 'Create budget' }).click();
    const projectRow = page.locator('tr[data-budget]').filter({ hasText: 'studio' });
    await projectRow.getByText(/of \$3\.00/).waitFor();
    await projectRow.getByRole('button', { name: 'Edit the budget of the project studio' }).waitFor();
    const stored = (await gateway.admin('GET', '/admin/v1/budgets')).body.data as { level: string; target: string; usd: number }[];
    assert.ok(stored.some((budget) => budget.level === 'project' && budget.target === 'studio' && budget.usd === 3), JSON.stringify(stored));
    assert.deepEqual(await accessibilityViolations(page), []);
    assert.deepEqual(problems, []);
  });
});
