import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, DESKTOP, shoot as shootInto, signIn as signInAs, startDashboardRig, watchedPage, type DashboardRig } from './helpers/dashboard-browser.js';
import { TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';

/**
 * The dashboard in Debian's Chromium, against a real gateway in front of the OpenAI fake:
 * sign-in, a key made in the dashboard and used with the official SDK, that call in the log
 * and in usage (equal to `modelgate usage --json`), pause, sign-out, and a viewer who can
 * change nothing. Screenshots of every page go to test-artifacts/dashboard/.
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const BIN = resolve('bin/modelgate.js');
const ADMIN = { email: 'admin@example.com', password: 'admin password 0123' };
const VIEWER = { email: 'viewer@example.com', password: 'viewer password 0123' };
const PHONE = { width: 390, height: 844 };

let rig: DashboardRig;
let gateway: TestGateway;
let browser: Browser;
/** Console errors and failed requests of every page: a CSP violation or a missing file shows here. */
const problems: string[] = [];

const newPage = (viewport = DESKTOP) => watchedPage(browser, gateway.url, problems, viewport);
const shoot = (page: Page, name: string) => shootInto(page, SCREENSHOTS, name);
const signIn = (page: Page, account: { email: string; password: string }) => signInAs(page, gateway.url, account);

function cliUsage(args: string[]): Promise<{ data: { model?: string | null; requests: number; total_tokens: number; cost_usd: number }[] }> {
  return new Promise((done, failed) => {
    execFile(process.execPath, [BIN, 'usage', ...args, '--json', '--url', gateway.url], { env: { ...process.env, MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN } }, (error, stdout, stderr) =>
      error === null ? done(JSON.parse(stdout)) : failed(new Error(stderr)),
    );
  });
}

describe('dashboard in a browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    rig = await startDashboardRig();
    ({ gateway, browser } = rig);
    const { accounts } = gateway.gateway.context;
    await accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
    await accounts.createUser(VIEWER.email, VIEWER.password, 'viewer');
  });
  after(async () => {
    await rig?.close();
  });

  test('an admin signs in, makes a key, sees its call in the log and usage, pauses it and signs out', async () => {
    const page = await newPage();

    // A wrong password: the sign-in page says so and nothing opens.
    await page.goto(`${gateway.url}/dashboard/keys`);
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'email or password is not right' }).waitFor();
    await shoot(page, 'sign-in');

    await signIn(page, ADMIN);
    // The overview is the landing; the keys are one link away.
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    assert.match(page.url(), /\/dashboard\/overview$/);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Keys' }).waitFor();

    // Create a key allowed one model, with a monthly cap.
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('Name').fill('class-2026');
    await page.getByLabel('Cost per UTC month (USD)').fill('5');
    await page.getByLabel('Tokens per UTC day').fill('abc');
    await page.getByText('a whole number of 1 or more').waitFor();
    await page.getByLabel('Tokens per UTC day').fill('100000');
    await page.getByPlaceholder('filter models').fill('gpt-4o-mini');
    await page.getByRole('checkbox', { name: 'gpt-4o-mini', exact: true }).check();
    await shoot(page, 'keys-create');
    await page.getByRole('button', { name: 'Create key' }).last().click();
    const secret = await page.getByLabel('Secret').inputValue();
    assert.match(secret, /^sk-mg-[A-Za-z0-9]{32,}$/);
    await shoot(page, 'keys-secret');
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('cell', { name: /class-2026/ }).first().waitFor();

    // The key works with the official SDK, for its allowed model only.
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: secret, maxRetries: 0 });
    const reply = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello from the dashboard test' }] });
    assert.equal(reply.object, 'chat.completion');
    await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }), /may not use the model/);
    // The record is written once the response has ended; wait for it rather than for a time.
    for (let attempt = 0; (await gateway.admin('GET', '/admin/v1/logs?model=gpt-4o-mini&status=success')).body.data.length === 0; attempt += 1) {
      assert.ok(attempt < 100, 'the call reached the request log');
      await gateway.gateway.context.logs.writer.flush();
    }

    // The call in the request log, and its detail.
    await page.getByRole('link', { name: 'Request log' }).click();
    await page.getByLabel('Model').fill('gpt-4o-mini');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const row = page.getByRole('row').filter({ hasText: '/v1/chat/completions' }).filter({ hasText: '200' });
    await row.first().waitFor();
    await shoot(page, 'logs');
    await row.first().getByRole('link').click();
    await page.getByRole('heading', { name: /^Request req_/ }).waitFor();
    await page.getByText('Hello from the dashboard test').waitFor();
    await page.getByRole('heading', { name: 'Upstream detail' }).waitFor();
    await shoot(page, 'log-detail');

    // Usage by model equals the CLI's for the same period, and the chart draws a bar.
    await page.goto(`${gateway.url}/dashboard/usage?since=1d&by=model&metric=cost_usd`);
    const usageRow = page.locator('tr[data-group="gpt-4o-mini"]');
    await usageRow.waitFor();
    await page.locator('.recharts-bar-rectangle path').first().waitFor();
    const cli = await cliUsage(['--since', '1d', '--by', 'model']);
    const expected = cli.data.find((entry) => entry.model === 'gpt-4o-mini');
    assert.ok(expected !== undefined && expected.cost_usd > 0);
    assert.equal(await usageRow.locator('[data-column="requests"]').innerText(), String(expected.requests));
    assert.equal(await usageRow.locator('[data-column="total_tokens"]').innerText(), String(expected.total_tokens));
    // Money reads with sensible precision (three significant digits below a dollar), not six decimals.
    const shownCost = await usageRow.locator('[data-column="cost_usd"]').innerText();
    assert.match(shownCost, /^\$0\.\d{2,6}$/);
    assert.equal(Number(shownCost.slice(1)), Number(expected.cost_usd.toPrecision(3)));
    await shoot(page, 'usage');

    // Pause: the key's next call is refused.
    await page.getByRole('link', { name: 'Keys' }).click();
    const keyRow = page.getByRole('row').filter({ hasText: 'class-2026' });
    await keyRow.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Pause key' }).click();
    await keyRow.getByText('paused', { exact: true }).waitFor();
    await shoot(page, 'keys');
    await assert.rejects(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.PermissionDeniedError);
      assert.equal((error.error as { code?: string }).code, 'key_paused');
      return true;
    });

    // Revoke asks first and says it is final.
    await keyRow.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('alertdialog').getByText('This is final.').waitFor();
    await shoot(page, 'keys-revoke-confirm');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();

    // On a phone the log still works.
    const phone = await newPage(PHONE);
    await signIn(phone, ADMIN);
    await phone.goto(`${gateway.url}/dashboard/logs`);
    await phone.getByRole('heading', { name: 'Request log' }).waitFor();
    await shoot(phone, 'logs-phone');
    await phone.context().close();

    // Sign out: back to the sign-in page, and the session no longer opens the admin API.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const status = await page.evaluate(async () => (await fetch('/admin/v1/keys')).status);
    assert.equal(status, 401);
    await page.context().close();
    assert.deepEqual(problems, []);
  });

  test('a viewer reads the log and usage but can change nothing, in the page or through the API', async () => {
    const page = await newPage();
    await signIn(page, VIEWER);
    // A viewer lands on the overview too, and reads the log from there.
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Request log' }).click();
    await page.getByRole('heading', { name: 'Request log' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Keys' }).count(), 0);
    await shoot(page, 'viewer-logs');
    await page.goto(`${gateway.url}/dashboard/keys`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0);

    // Straight to the API with the page's own session and CSRF token: refused by role.
    const answers = await page.evaluate(async () => {
      const session = (await (await fetch('/admin/v1/session')).json()) as { csrf_token: string };
      const create = await fetch('/admin/v1/keys', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token },
        body: JSON.stringify({ name: 'sneaky', scopes: ['model:request'] }),
      });
      const list = await fetch('/admin/v1/keys');
      return { create: create.status, createCode: ((await create.json()) as { error: { code: string } }).error.code, list: list.status };
    });
    assert.deepEqual(answers, { create: 403, createCode: 'insufficient_role', list: 403 });
    await page.context().close();
  });

  test("a translated call's dropped fields are in its log detail, for an admin and a viewer", async () => {
    // Claude Code's serving hints, sent to a GPT model over the Messages API: left out and named.
    const key = await gateway.createKey({ scopes: ['model:request'] });
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        max_tokens: 64,
        context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    });
    assert.equal(response.status, 200, await response.text());
    assert.equal(response.headers.get('x-modelgate-dropped'), 'system[0].cache_control,context_management');
    const requestId = response.headers.get('x-request-id')!;
    await gateway.gateway.context.logs.writer.flush();
    for (const [account, name] of [[ADMIN, 'log-dropped-fields'], [VIEWER, 'viewer-log-dropped-fields']] as const) {
      const page = await newPage();
      await signIn(page, account);
      await page.goto(`${gateway.url}/dashboard/logs/${requestId}`);
      await page.getByRole('heading', { name: 'Fields left out' }).waitFor();
      const listed = await page.getByRole('list', { name: 'Fields left out' }).getByRole('listitem').allTextContents();
      assert.deepEqual(listed, ['system[0].cache_control', 'context_management'], name);
      await shoot(page, name);
      await page.context().close();
    }
    assert.deepEqual(problems, []);
  });
});
