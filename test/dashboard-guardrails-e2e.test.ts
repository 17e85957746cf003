import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, shoot, signIn, watchedPage } from './helpers/dashboard-browser.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * The dashboard's Guardrails page in Debian's Chromium: the config file's guardrails with where
 * they attach, read-only, and a dry run of one on a sample text. Screenshots go to
 * test-artifacts/dashboard/.
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const ADMIN = { email: 'guard-admin@example.com', password: 'admin password 0123' };

let gateway: TestGateway;
let browser: Browser;
const problems: string[] = [];

describe('the Guardrails page in a browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    gateway = await startTestGateway({
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
});
