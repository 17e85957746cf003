import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, seriousViolations, shoot, signIn, watchedPage } from './helpers/dashboard-browser.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * The users and audit pages in Debian's Chromium: an administrator invites a team admin with a
 * one-time password, changes a role, disables and resets an account; the invited team admin
 * signs in and sees its pages only; the audit log lists those changes with filters, pages and
 * a before/after view, and exports them. axe-core finds no serious or critical violation.
 * Screenshots go to test-artifacts/dashboard/.
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const ADMIN = { email: 'users-admin@example.com', password: 'admin password 0123' };

let gateway: TestGateway;
let browser: Browser;
const problems: string[] = [];

describe('the users and audit pages in a browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    gateway = await startTestGateway();
    await gateway.gateway.storage.db.insertInto('teams').values({ id: 'red', name: 'Red', created_at: Date.now() }).execute();
    await gateway.gateway.context.accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
    await gateway.gateway.context.accounts.createUser('reader@example.com', 'reader password 0123', 'viewer');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
  });

  test('an admin invites, changes a role, disables and resets; the invited team admin sees its pages only', async () => {
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, ADMIN);
    await page.getByRole('link', { name: 'Users' }).click();
    const table = page.getByRole('table', { name: 'Dashboard accounts' });
    await table.getByRole('row').filter({ hasText: 'reader@example.com' }).waitFor();

    await page.getByLabel('Email').fill('lead@example.com');
    await page.locator('#invite-role').selectOption('team_admin');
    await page.getByLabel('Teams').fill('red');
    await page.getByRole('button', { name: 'Invite' }).click();
    const password = await page.getByTestId('one-time-password').innerText();
    assert.equal(password.length, 20);
    await table.getByRole('row').filter({ hasText: 'lead@example.com' }).getByText('team admin of red').waitFor();
    assert.deepEqual(await seriousViolations(page), []);
    await shoot(page, SCREENSHOTS, 'users');
    await page.getByRole('button', { name: 'Done' }).click();

    const reader = table.getByRole('row').filter({ hasText: 'reader@example.com' });
    await reader.getByRole('button', { name: 'Change role of reader@example.com' }).click();
    await page.getByRole('form', { name: 'Role of reader@example.com' }).locator('select').selectOption('admin');
    await reader.getByRole('button', { name: 'Save' }).click();
    await table.getByRole('row').filter({ hasText: 'reader@example.com' }).getByRole('cell', { name: 'admin', exact: true }).waitFor();

    await table.getByRole('button', { name: 'Disable reader@example.com' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Disable' }).click();
    await table.getByRole('row').filter({ hasText: 'reader@example.com' }).getByText('disabled', { exact: true }).waitFor();
    await table.getByRole('button', { name: 'Reset password of reader@example.com' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Reset' }).click();
    await page.getByTestId('one-time-password').waitFor();

    const users = (await gateway.admin('GET', '/admin/v1/users')).body.data;
    const readerView = users.find((user: { email: string }) => user.email === 'reader@example.com');
    assert.deepEqual([readerView.role, readerView.disabled], ['admin', true]);

    const lead = await watchedPage(browser, gateway.url, problems);
    await signIn(lead, gateway.url, { email: 'lead@example.com', password });
    const nav = lead.getByRole('navigation', { name: 'Dashboard' });
    await nav.getByRole('link', { name: 'Keys' }).waitFor();
    assert.equal(await nav.getByRole('link', { name: 'Users' }).count(), 0);
    assert.equal(await nav.getByRole('link', { name: 'Audit log' }).count(), 0);
    await lead.goto(`${gateway.url}/dashboard/users`);
    await lead.getByRole('heading', { name: 'Not found' }).waitFor();
    await lead.context().close();
    await page.context().close();
  });

  test('the audit log filters, pages, shows before and after, and exports', async () => {
    // More entries than a page holds, after the ones the first test made.
    for (let index = 0; index < 55; index += 1) await gateway.admin('POST', '/admin/v1/keys', { name: `audited-${index}`, scopes: ['model:request'] });
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, ADMIN);
    await page.getByRole('link', { name: 'Audit log' }).click();
    const table = page.getByRole('table', { name: 'Audit entries, newest first' });
    await table.getByRole('row').filter({ hasText: 'key.create' }).first().waitFor();
    assert.equal(await table.locator('tbody tr').count(), 50);
    await page.getByRole('button', { name: 'Next →' }).click();
    await page.getByText('Page 2').waitFor();
    await table.getByRole('row').filter({ hasText: 'user.update' }).waitFor();

    await page.getByLabel('Action').fill('user.update');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/action=user\.update/);
    await page.getByText('Page 1').waitFor();
    const entry = table.getByRole('row').filter({ hasText: 'user.update' });
    assert.equal(await entry.count(), 1);
    await entry.getByRole('button', { name: 'Show changes' }).click();
    const diff = page.getByRole('table', { name: /Changes of user\.update/ });
    const role = diff.getByRole('row').filter({ hasText: 'role' }).first();
    assert.match(await role.innerText(), /"viewer"\s+"admin"/);
    assert.deepEqual(await seriousViolations(page), []);
    await shoot(page, SCREENSHOTS, 'audit');

    const href = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
    assert.equal(href, '/admin/v1/audit/export?action=user.update&format=csv');
    const csv = await page.evaluate(async (url) => (await fetch(url)).text(), href!);
    const lines = csv.trim().split('\r\n');
    assert.equal(lines.length, 2);
    assert.match(lines[1]!, /user\.update/);
    assert.deepEqual(problems, []);
  });
});
