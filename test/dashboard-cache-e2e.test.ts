import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import OpenAI from 'openai';
import { chromium, type Browser } from 'playwright-core';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { CHROMIUM, CHROMIUM_ARGS, shoot, signIn, watchedPage } from './helpers/dashboard-browser.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * The keys page's "Clear cache" for a project in Debian's Chromium: offered once a project is
 * chosen, confirmed in a dialog, the project's cached answers gone (another project's kept), and
 * the change in the audit log under the signed-in user. Screenshots go to test-artifacts/dashboard/.
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const ADMIN = { email: 'cache-admin@example.com', password: 'admin password 0123' };

let fake: OpenAIFake;
let gateway: TestGateway;
let browser: Browser;
const problems: string[] = [];

describe("clearing a project's cache in a browser", { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    fake = await startOpenAIFake();
    fake.scriptChat({ kind: 'reply', text: 'Paris.', usage: { promptTokens: 12, completionTokens: 2 } });
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-cache-test' },
      configFile: { cache: [{ name: 'classes', apply: { projects: ['class-201', 'class-202'] } }] },
    });
    await gateway.gateway.context.keys.projects.create('class-201');
    await gateway.gateway.context.keys.projects.create('class-202');
    await gateway.gateway.context.accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
    await fake?.server.close();
  });

  test('an admin clears one project\'s cached answers after confirming; the other project keeps its own', async () => {
    const clientOf = async (projectId: string) => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: await gateway.createKey({ projectId }), maxRetries: 0 });
    const first = await clientOf('class-201');
    const second = await clientOf('class-202');
    const ask = async (client: OpenAI) =>
      (await client.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'Capital of France?' }] }).withResponse()).response.headers.get('x-modelgate-cache');
    assert.equal(await ask(first), 'miss');
    assert.equal(await ask(second), 'miss');
    assert.equal(await ask(first), 'hit');

    const page = await watchedPage(browser, gateway.url, problems);
    await signIn(page, gateway.url, ADMIN);
    await page.getByRole('link', { name: 'Keys' }).click();
    assert.equal(await page.getByRole('button', { name: 'Clear cache' }).count(), 0, 'offered only for a chosen project');
    await page.getByLabel('Project').selectOption('class-201');
    await page.getByRole('button', { name: 'Clear cache' }).click();
    const dialog = page.getByRole('alertdialog');
    await dialog.getByText('Clear the response cache of class-201?').waitFor();
    await shoot(page, SCREENSHOTS, 'keys-clear-cache');
    await dialog.getByRole('button', { name: 'Clear cache' }).click();
    await page.getByRole('status').filter({ hasText: 'Cleared 1 cached answer of class-201.' }).waitFor();

    assert.equal(await ask(first), 'miss', "the project's answer is gone");
    assert.equal(await ask(second), 'hit', "another project's is kept");
    const audited = (await gateway.admin('GET', '/admin/v1/audit?action=cache.clear')).body.data[0];
    assert.deepEqual(audited.target, { type: 'project', id: 'class-201' });
    assert.equal(audited.actor.name, ADMIN.email);
    assert.equal(audited.after.cleared, 1);
    assert.deepEqual(problems, []);
  });
});
