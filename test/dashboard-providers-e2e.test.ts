import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { VENDOR_PROVIDERS } from '../src/providers/index.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { CHROMIUM, CHROMIUM_ARGS, shoot, signIn, watchedPage } from './helpers/dashboard-browser.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * The dashboard's Providers page in Debian's Chromium: the environment's providers read-only
 * with their source, a form generated for every kind, a credential added, tested, edited
 * (a bad value refused naming the field) and removed, the secret never on the page.
 * Screenshots go to test-artifacts/dashboard/.
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const ADMIN = { email: 'providers-admin@example.com', password: 'admin password 0123' };
const SECRET = `sk-proj-${'FAKEfake00'.repeat(4)}`;

let fake: OpenAIFake;
let gateway: TestGateway;
let browser: Browser;
const problems: string[] = [];

describe('the Providers page in a browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: { OPENAI_API_KEY: '' } });
    await gateway.gateway.context.accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
    await fake?.close();
  });

  test('an admin sees where providers come from, adds a credential from the generated form, tests, edits and removes it', async () => {
    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, ADMIN);
    await page.getByRole('link', { name: 'Providers' }).click();
    const table = page.getByRole('table', { name: 'Providers' });
    const anthropic = table.getByRole('row').filter({ hasText: 'environment: ANTHROPIC_API_KEY' });
    await anthropic.waitFor();
    assert.match(await anthropic.innerText(), /read-only/);
    assert.equal(await anthropic.getByRole('button', { name: 'Edit anthropic' }).count(), 0, 'an environment entry cannot be edited here');

    // Every kind the descriptors know has its form, its fields from its settings schema.
    const form = page.getByRole('form', { name: 'Add a provider' });
    for (const vendor of VENDOR_PROVIDERS) {
      await form.getByLabel('Kind').selectOption(vendor.name);
      for (const field of Object.keys(vendor.settings.properties)) await form.getByLabel(field, { exact: true }).waitFor();
      for (const field of vendor.secretFields) assert.equal(await form.getByLabel(field, { exact: true }).getAttribute('type'), 'password', `${vendor.name}.${field}`);
    }

    await form.getByLabel('Kind').selectOption('openai');
    await form.getByLabel('Name').fill('openai');
    await form.getByLabel('apiKey', { exact: true }).fill(SECRET);
    await form.getByLabel('baseUrl', { exact: true }).fill(`${fake.server.url}/v1`);
    await form.getByRole('button', { name: 'Add provider' }).click();
    const row = table.getByRole('row').filter({ hasText: 'admin API' });
    await row.getByText('callable').waitFor();
    assert.match(await row.innerText(), /apiKey sha256:[0-9a-f]{8} …ke00/);
    assert.ok(!(await page.content()).includes(SECRET), 'the secret stays off the page once saved');

    await row.getByRole('button', { name: 'Test openai' }).click();
    await page.getByRole('status').filter({ hasText: /openai: ok: .+ answered in \d+ ms/ }).waitFor();
    assert.equal(fake.chatRequests().at(-1)?.credential, SECRET);
    await shoot(page, SCREENSHOTS, 'providers');

    await row.getByRole('button', { name: 'Edit openai' }).click();
    const edit = page.getByRole('form', { name: 'Edit openai' });
    assert.equal(await edit.getByLabel('apiKey', { exact: true }).inputValue(), '', 'a saved secret is never filled in again');
    await edit.getByLabel('baseUrl', { exact: true }).fill('ftp://example.com');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.getByRole('alert').filter({ hasText: 'invalid setting settings.baseUrl' }).waitFor();
    await edit.getByLabel('baseUrl', { exact: true }).fill(`${fake.server.url}/v1/`);
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'detached' });
    const saved = (await gateway.admin('GET', '/admin/v1/providers')).body.data.find((entry: { name: string }) => entry.name === 'openai');
    assert.equal(saved.settings.baseUrl, `${fake.server.url}/v1/`);
    assert.equal(saved.credentials.length, 1, 'the secret left empty is kept');

    await row.getByRole('button', { name: 'Remove openai' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Remove' }).click();
    await row.waitFor({ state: 'detached' });

    // The one 400 is the refused edit above.
    assert.deepEqual(problems, ['console: Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });
});
