import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { accessibilityViolations, CHROMIUM, CHROMIUM_ARGS, shoot, signIn, watchedPage } from './helpers/dashboard-browser.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';

/**
 * The dashboard's Guardrails page in Debian's Chromium: the config file's guardrails with where
 * they attach, read-only; one defined, edited and deleted through its form (a refused entry
 * naming its field), enforced on the next call; and a dry run of one on a sample text, with no
 * serious accessibility violation. Screenshots go to test-artifacts/dashboard/.
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const ADMIN = { email: 'guard-admin@example.com', password: 'admin password 0123' };

let gateway: TestGateway;
let fake: OpenAIFake;
let browser: Browser;
const problems: string[] = [];

describe('the Guardrails page in a browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    fake = await startOpenAIFake();
    gateway = await startTestGateway({
      env: { OPENAI_API_KEY: 'sk-upstream-guardrails-page-0000000', OPENAI_BASE_URL: `${fake.server.url}/v1` },
      configFile: {
        guardrails: [
          { name: 'no-pii', check: 'pii', stage: ['input', 'output'], action: 'mask', apply: { projects: ['class-101'] }, options: { kinds: ['email'] } },
          { name: 'no-secrets', check: 'secrets', apply: { all: true } },
        ],
      },
    });
    await gateway.gateway.context.accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
    await fake?.close();
  });

  test('an admin sees each guardrail and where it attaches, and dry-runs one on a sample', async () => {
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, ADMIN);
    await page.getByRole('link', { name: 'Guardrails' }).click();
    const table = page.getByRole('table', { name: 'Configured guardrails' });
    const pii = table.getByRole('row').filter({ hasText: 'no-pii' });
    await pii.waitFor();
    assert.match(await pii.innerText(), /pii\s+input, output\s+mask\s+block \(closed\)\s+projects: class-101\s+config file/);
    assert.match(await table.getByRole('row').filter({ hasText: 'no-secrets' }).innerText(), /all traffic/);

    await page.getByLabel('Guardrail', { exact: true }).selectOption('no-pii');
    await page.getByLabel('Sample text').fill('write to ada@example.org');
    await page.getByRole('button', { name: 'Run check' }).click();
    const result = page.getByRole('status', { name: 'Dry run result' });
    await result.getByText('write to [email]').waitFor();
    assert.match(await result.innerText(), /masked — matched/);
    await shoot(page, SCREENSHOTS, 'guardrails');

    await page.getByLabel('Guardrail', { exact: true }).selectOption('no-secrets');
    await page.getByLabel('Sample text').fill('nothing secret here');
    await page.getByRole('button', { name: 'Run check' }).click();
    await result.getByText(/passed — nothing found/).waitFor();
    assert.deepEqual(problems, []);
  });

  test('an admin defines a guardrail in the form, it blocks the next call, is edited and deleted', async () => {
    const key = await gateway.createKey({ projectId: 'class-202' });
    const chat = (content: string) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as { error?: { code: string } } }));
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, ADMIN);
    await page.getByRole('link', { name: 'Guardrails' }).click();
    const form = page.getByRole('form', { name: 'Define a guardrail' });
    await form.waitFor();
    await form.getByLabel('Name').fill('codename');
    await form.getByLabel('Check').selectOption('keywords');
    await form.getByLabel('Projects (comma-separated)').fill('class-202');
    // A refused entry: the gateway's answer names the field.
    await form.getByLabel('Check').selectOption('regex');
    await form.getByLabel('Patterns, one per line').fill('(unclosed');
    await form.getByRole('button', { name: 'Create guardrail' }).click();
    await form.getByRole('alert').getByText(/options\.patterns\[0\]/).waitFor();
    await form.getByLabel('Check').selectOption('keywords');
    await form.getByLabel('Words, one per line').fill('nightingale');
    await form.getByRole('button', { name: 'Create guardrail' }).click();
    const table = page.getByRole('table', { name: 'Configured guardrails' });
    const row = table.getByRole('row').filter({ hasText: 'codename' });
    await row.waitFor();
    assert.match(await row.innerText(), /keywords\s+input\s+block\s+block \(closed\)\s+projects: class-202\s+dashboard/);
    const blocked = await chat('tell me of Nightingale');
    assert.deepEqual([blocked.status, blocked.body.error?.code], [400, 'guardrail_blocked']);
    assert.deepEqual(await accessibilityViolations(page), []);
    await shoot(page, SCREENSHOTS, 'guardrails-defined');

    await row.getByRole('button', { name: 'Edit codename' }).click();
    const edit = page.getByRole('form', { name: 'Edit codename' });
    await edit.getByLabel('Action').selectOption('log');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await table.getByRole('row').filter({ hasText: 'codename' }).filter({ hasText: 'log' }).waitFor();
    assert.equal((await chat('tell me of Nightingale')).status, 200);

    await table.getByRole('row').filter({ hasText: 'codename' }).getByRole('button', { name: 'Delete codename' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
    await table.getByRole('row').filter({ hasText: 'codename' }).waitFor({ state: 'detached' });
    assert.equal((await send('GET')).filter((name) => name === 'codename').length, 0);
    assert.match(await table.getByRole('row').filter({ hasText: 'no-pii' }).innerText(), /config file\s*$/);
    // The one refused entry is the browser's only complaint.
    assert.deepEqual(problems, ['console: Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });
});

async function send(method: string): Promise<string[]> {
  const answer = await gateway.admin(method, '/admin/v1/guardrails');
  return (answer.body.data as { name: string }[]).map((entry) => entry.name);
}
