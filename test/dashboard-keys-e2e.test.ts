import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { accessibilityViolations, CHROMIUM, shoot as shootInto, signIn, startDashboardRig, watchedPage, type DashboardRig } from './helpers/dashboard-browser.js';
import type { TestGateway } from './helpers/gateway.js';

/**
 * Keys as operators manage them, in Debian's Chromium against a real gateway: many keys at
 * once with their secrets downloaded once as CSV, expiry, tags and metadata, rotation with a
 * grace period, and one action on every key of a project.
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const ADMIN = { email: 'keys-admin@example.com', password: 'admin password 0123' };

let rig: DashboardRig;
let gateway: TestGateway;
let browser: Browser;
const problems: string[] = [];

async function signedIn(): Promise<Page> {
  const page = await watchedPage(browser, gateway.url, problems);
  await signIn(page, gateway.url, ADMIN);
  await page.goto(`${gateway.url}/dashboard/keys`);
  await page.getByRole('heading', { name: 'Keys' }).waitFor();
  return page;
}

/** What a key's secret gets from the model list: 200 while it works. */
async function modelsStatus(secret: string): Promise<number> {
  const response = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
  await response.body?.cancel();
  return response.status;
}

interface KeyRow {
  id: string;
  name: string;
  status: string;
  project_id: string;
  expires_at: string | null;
  tags: string[];
  metadata: Record<string, string>;
}

async function keysOf(project: string): Promise<KeyRow[]> {
  const { body } = await gateway.admin('GET', `/admin/v1/keys?project=${project}`);
  return (body as { data: KeyRow[] }).data;
}

describe('managing keys in the dashboard', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    rig = await startDashboardRig();
    ({ gateway, browser } = rig);
    await gateway.gateway.context.accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
  });
  after(async () => {
    await rig?.close();
    assert.deepEqual(problems, []);
  });

  test('a class of keys at once: named PREFIX-1…N, with tags, metadata and an expiry, the secrets downloaded once as CSV', async () => {
    const page = await signedIn();
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('How many keys').fill('3');
    await dialog.getByLabel('Name prefix').fill('student');
    await dialog.getByLabel('Project').fill('class-a');
    await dialog.getByLabel('Tags').fill('class-2026, room:b12');
    await dialog.getByLabel('Metadata').fill('teacher=ana@example.com\ncourse=ml-101');
    const expiry = new Date(Date.now() + 30 * 86_400_000);
    expiry.setSeconds(0, 0);
    const local = new Date(expiry.getTime() - expiry.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await dialog.getByLabel('Expires').fill(local);
    assert.deepEqual(await accessibilityViolations(page), []);
    await dialog.getByRole('button', { name: 'Create 3 keys' }).click();
    await dialog.getByText('3 keys created').waitFor();
    await shoot(page, 'keys-bulk-created');
    const [download] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('link', { name: 'Download 3 secrets (CSV)' }).click()]);
    const csv = readFileSync((await download.path())!, 'utf8').trim().split('\n');
    assert.equal(csv[0], 'id,name,secret');
    const rows = csv.slice(1).map((line) => line.split(','));
    assert.deepEqual(rows.map((row) => row[1]), ['student-1', 'student-2', 'student-3']);
    for (const [, , secret] of rows) assert.equal(await modelsStatus(secret!), 200, 'each downloaded secret works');

    const keys = await keysOf('class-a');
    assert.equal(keys.length, 3);
    for (const key of keys) {
      assert.deepEqual(key.tags, ['class-2026', 'room:b12']);
      assert.deepEqual(key.metadata, { teacher: 'ana@example.com', course: 'ml-101' });
      assert.equal(key.expires_at, expiry.toISOString());
    }
    await page.context().close();
  });

  test('editing tags leaves an expiry set to the second as it was; a bad tag is named before anything is sent', async () => {
    const { body: created } = await gateway.admin('POST', '/admin/v1/keys', { name: 'exact-expiry', project: 'edits', scopes: ['model:request'], expires_at: '2031-05-06T07:08:09.000Z' });
    const page = await signedIn();
    await page.getByRole('button', { name: 'Edit exact-expiry' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Tags').fill('ok-tag, -bad');
    await dialog.getByText('"-bad": letters, digits').waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Save changes' }).isDisabled(), true);
    await dialog.getByLabel('Tags').fill('ok-tag');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    const [key] = (await keysOf('edits')).filter((row) => row.id === (created as { id: string }).id);
    assert.deepEqual(key?.tags, ['ok-tag']);
    assert.equal(key?.expires_at, '2031-05-06T07:08:09.000Z');
    await page.context().close();
  });

  test('rotation: a new secret shown once; the old one keeps working through the grace period', async () => {
    const { body: created } = await gateway.admin('POST', '/admin/v1/keys', { name: 'to-rotate', project: 'rotation', scopes: ['model:request'] });
    const oldSecret = (created as { secret: string }).secret;
    const page = await signedIn();
    await page.getByRole('button', { name: 'Rotate to-rotate' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('The old secret keeps working for').selectOption({ label: '1 hour' });
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    const newSecret = await dialog.getByLabel('Secret').inputValue();
    assert.notEqual(newSecret, oldSecret);
    assert.equal(await modelsStatus(newSecret), 200);
    assert.equal(await modelsStatus(oldSecret), 200, 'within the grace period');
    await page.context().close();
  });

  test('every key of a project paused, then revoked, in one action each', async () => {
    for (const name of ['lab-1', 'lab-2']) await gateway.admin('POST', '/admin/v1/keys', { name, project: 'lab', scopes: ['model:request'] });
    const page = await signedIn();
    await page.getByLabel('Project', { exact: true }).selectOption('lab');
    const group = page.getByRole('group', { name: 'Every key of lab' });
    await group.getByRole('button', { name: 'Pause all' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Pause keys' }).click();
    await page.getByRole('status').filter({ hasText: '2 keys of lab paused.' }).waitFor();
    assert.deepEqual((await keysOf('lab')).map((key) => key.status), ['paused', 'paused']);
    await group.getByRole('button', { name: 'Revoke all' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke for good' }).click();
    await page.getByRole('status').filter({ hasText: '2 keys of lab revoked.' }).waitFor();
    assert.deepEqual((await keysOf('lab')).map((key) => key.status), ['revoked', 'revoked']);
    await shoot(page, 'keys-project-revoked');
    await page.context().close();
  });
});

const shoot = (page: Page, name: string) => shootInto(page, SCREENSHOTS, name);
