import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { accessibilityViolations, CHROMIUM, CHROMIUM_ARGS, shoot, signIn, watchedPage } from './helpers/dashboard-browser.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * The Teams page in Debian's Chromium: an administrator creates a team, moves a project into
 * it, sees the refusal to delete it while it holds the project, renames it and deletes it once
 * empty; a team admin sees its own team only, without the forms. The usage page groups by
 * team. The create-key dialog makes one key a line of a CSV file (name,end_user), the end user
 * in the key's metadata, and its secrets download names them. axe-core finds no serious or critical violation. Screenshots go to test-artifacts/dashboard/.
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const ADMIN = { email: 'teams-admin@example.com', password: 'admin password 0123' };
const LEAD = { email: 'teams-lead@example.com', password: 'lead password 01234' };

let gateway: TestGateway;
let browser: Browser;
const problems: string[] = [];

describe('the Teams page in a browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    gateway = await startTestGateway();
    assert.equal((await gateway.admin('POST', '/admin/v1/teams', { id: 'red', name: 'Red' })).status, 201);
    assert.equal((await gateway.admin('POST', '/admin/v1/projects', { id: 'lab', name: 'Lab' })).status, 201);
    assert.equal((await gateway.admin('POST', '/admin/v1/projects', { id: 'studio', name: 'Studio', team_id: 'red' })).status, 201);
    for (const [name, student] of [['lab one', 'student-1'], ['lab two', 'student-2']] as const) {
      const key = await gateway.admin('POST', '/admin/v1/keys', { name, project: 'lab', scopes: ['model:request'] });
      assert.equal(key.status, 201);
      // A keyed request refused before any provider (unknown model): a record under the key.
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.body.secret}`, 'content-type': 'application/json', 'x-end-user-id': student },
        body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
      await response.text();
    }
    await gateway.gateway.context.logs.writer.flush();
    await gateway.gateway.context.accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
    await gateway.gateway.context.accounts.createUser(LEAD.email, LEAD.password, 'team_admin', ['red']);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
  });

  test('an admin creates a team, moves a project in and out, renames it and deletes it', async () => {
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, ADMIN);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Teams' }).click();
    const table = page.getByRole('table', { name: /Teams, their projects/ });
    await table.locator('tr[data-team="default"]').getByText('Lab (2 keys)').waitFor();
    await table.locator('tr[data-team="red"]').getByText('Studio (0 keys)').waitFor();

    await page.getByLabel('Id').fill('research');
    await page.getByLabel('Name', { exact: true }).fill('Research');
    await page.getByRole('button', { name: 'Create team' }).click();
    const research = table.locator('tr[data-team="research"]');
    await research.getByText('no projects').waitFor();

    await page.locator('#move-project').selectOption('lab');
    await page.locator('#move-team').selectOption('research');
    await page.getByRole('button', { name: 'Move', exact: true }).click();
    await research.getByText('Lab (2 keys)').waitFor();
    assert.equal((await gateway.admin('GET', '/admin/v1/projects')).body.data.find((project: { id: string }) => project.id === 'lab').team_id, 'research');
    assert.deepEqual(await accessibilityViolations(page), []);
    await shoot(page, SCREENSHOTS, 'teams');

    await research.getByRole('button', { name: 'Delete Research' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
    await research.getByRole('alert').getByText(/still holds project "lab"/).waitFor();

    await research.getByRole('button', { name: 'Rename Research' }).click();
    await research.getByLabel('New name of Research').fill('Research lab');
    await research.getByRole('button', { name: 'Save' }).click();
    await research.getByRole('rowheader').getByText('Research lab').waitFor();

    await page.locator('#move-project').selectOption('lab');
    await page.locator('#move-team').selectOption('default');
    await page.getByRole('button', { name: 'Move', exact: true }).click();
    await research.getByText('no projects').waitFor();
    await research.getByRole('button', { name: 'Delete Research lab' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
    await research.waitFor({ state: 'detached' });
    assert.equal((await gateway.admin('GET', '/admin/v1/teams/research')).status, 404);
    assert.equal(await table.locator('tr[data-team="default"]').getByRole('button', { name: /^Delete/ }).count(), 0);

    await page.goto(`${gateway.url}/dashboard/usage?by=team`);
    // The lab project's records count under the team it is in now.
    await page.locator('tr[data-group="default"]').waitFor();
    assert.equal(await page.locator('#usage-by').inputValue(), 'team');
    // The refused delete is the one failed call the browser reports.
    assert.deepEqual(problems.splice(0), ['console: Failed to load resource: the server responded with a status of 409 (Conflict)']);
  });

  test('the request log and usage show keys by name; the log filter takes a name', async () => {
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, ADMIN);
    await page.goto(`${gateway.url}/dashboard/logs`);
    await page.getByRole('cell', { name: 'lab two', exact: true }).waitFor();
    await page.getByLabel('Key', { exact: true }).fill('lab one');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/key_name=lab\+one|key_name=lab%20one/);
    // The unfiltered rows stay until the filtered page arrives: wait for them to go, not count them at once.
    await page.getByRole('cell', { name: 'lab two', exact: true }).first().waitFor({ state: 'detached' });
    await page.getByRole('cell', { name: 'lab one', exact: true }).first().waitFor();
    await page.goto(`${gateway.url}/dashboard/usage?since=1d&by=key`);
    await page.locator('tr[data-group="lab one"]').waitFor();
    await page.locator('tr[data-group="lab two"]').waitFor();
    // A class's spend per student: the end user each request named.
    await page.goto(`${gateway.url}/dashboard/usage?since=1d&by=end_user`);
    await page.locator('tr[data-group="student-1"]').waitFor();
    await page.locator('tr[data-group="student-2"]').waitFor();
    assert.equal(await page.locator('#usage-by').inputValue(), 'end_user');
    assert.deepEqual(problems, []);
  });

  test("while a new filter's page loads, the request log does not show the old rows as its result", async () => {
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, ADMIN);
    // The filtered page is held back until the assertions about the wait are done.
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let asked!: () => void;
    const held = new Promise<void>((resolve) => {
      asked = resolve;
    });
    await page.route(
      (url) => url.pathname === '/admin/v1/logs' && url.searchParams.get('key_name') === 'lab one',
      async (route) => {
        asked();
        await released;
        await route.continue();
      },
    );
    await page.goto(`${gateway.url}/dashboard/logs`);
    await page.getByRole('cell', { name: 'lab two', exact: true }).first().waitFor();
    await page.getByLabel('Key', { exact: true }).fill('lab one');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await held;
    const table = page.getByRole('region', { name: 'Request log, newest first' });
    assert.equal(await table.getByRole('cell', { name: 'lab two', exact: true }).count(), 0, 'the unfiltered rows are not shown as the filtered result');
    await table.getByRole('cell', { name: 'Loading…' }).waitFor();
    release();
    await table.getByRole('cell', { name: 'lab one', exact: true }).first().waitFor();
    assert.equal(await table.getByRole('cell', { name: 'lab two', exact: true }).count(), 0);
    assert.deepEqual(problems, []);
  });

  test('a team admin sees its own team only, read only', async () => {
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, LEAD);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Teams' }).click();
    const table = page.getByRole('table', { name: /Teams, their projects/ });
    await table.locator('tr[data-team="red"]').getByText('Studio (0 keys)').waitFor();
    assert.equal(await table.locator('tr[data-team]').count(), 1);
    assert.equal(await page.getByRole('button', { name: 'Create team' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Rename|^Delete/ }).count(), 0);
    assert.deepEqual(await accessibilityViolations(page), []);
    assert.deepEqual(problems, []);
  });

  test('keys from a CSV file of names and end users; the secrets CSV names the end users', async () => {
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, ADMIN);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog');
    const input = dialog.getByLabel('Or from a CSV file');
    await input.setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from('Ada,student-17,extra\n') });
    await dialog.getByText('bad.csv: line 1 has 3 fields; each line is name,end_user').waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Create key' }).isDisabled(), true);
    await input.setInputFiles({ name: 'cs101.csv', mimeType: 'text/csv', buffer: Buffer.from('name,end_user\r\nAda,student-17\r\n"Hopper, Grace",student-18\r\n') });
    await dialog.getByText('2 keys from cs101.csv').waitFor();
    assert.equal(await dialog.getByLabel('How many keys').count(), 0);
    await dialog.getByLabel('Project').fill('studio');
    await dialog.getByLabel('Metadata').fill('course=cs101');
    assert.deepEqual(await accessibilityViolations(page), []);
    await dialog.getByRole('button', { name: 'Create 2 keys' }).click();
    const [download] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('link', { name: 'Download 2 secrets (CSV)' }).click()]);
    const csv = readFileSync((await download.path())!, 'utf8').trim().split('\n');
    assert.equal(download.suggestedFilename(), 'cs101-keys.csv');
    assert.equal(csv[0], 'id,name,end_user,secret');
    assert.match(csv[2]!, /^key_\w+,"Hopper, Grace",student-18,sk-mg-\w+$/);
    const keys = (await gateway.admin('GET', '/admin/v1/keys?project=studio')).body.data as { name: string; metadata: Record<string, string> }[];
    assert.deepEqual(new Map(keys.map((key) => [key.name, key.metadata])).get('Ada'), { course: 'cs101', endUser: 'student-17' });
    assert.deepEqual(problems, []);
  });
});
