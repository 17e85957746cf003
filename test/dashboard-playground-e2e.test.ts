import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, shoot as shootInto, signIn as signInAs, watchedPage } from './helpers/dashboard-browser.js';
import { FAKE_PNG_BASE64, startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { REJECTED_THEN_ACCEPTED } from './helpers/vetting-provider.js';

/**
 * The playground in Debian's Chromium, against a real gateway in front of the OpenAI fake:
 * a streamed chat with an image and a PDF whose text arrives piece by piece and whose call is
 * in the request log under the chosen key, "Show code" without the secret, a VETTING run
 * whose rejected and accepted attempts stand side by side, embeddings, an image and speech.
 * Screenshots go to test-artifacts/dashboard/ (docs/images/dashboard/ keeps copies).
 */

const SCREENSHOTS = resolve('test-artifacts/dashboard');
const ADMIN = { email: 'admin@example.com', password: 'admin password 0123' };
/** The smallest PDF a reader opens: one empty page. */
const PDF = '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n';

let fake: OpenAIFake;
let gateway: TestGateway;
let browser: Browser;
let files: string;
let key: { id: string; secret: string };
const problems: string[] = [];

const shoot = (page: Page, name: string) => shootInto(page, SCREENSHOTS, name);

/** A signed-in admin on the playground, calls made as the test's key, on one tab. */
async function openPlayground(tab: string): Promise<Page> {
  const page = await watchedPage(browser, gateway.url, problems);
  await signInAs(page, gateway.url, ADMIN);
  await page.getByRole('link', { name: 'Playground' }).click();
  await page.getByRole('heading', { name: 'Playground' }).waitFor();
  await page.getByLabel('Find a key').fill('tutoring');
  await page.getByLabel('Calls are made as the key').selectOption(key.id);
  await page.getByRole('tab', { name: tab }).click();
  return page;
}

describe('the playground in a browser', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    files = mkdtempSync(join(tmpdir(), 'modelgate-playground-'));
    writeFileSync(join(files, 'pixel.png'), Buffer.from(FAKE_PNG_BASE64, 'base64'));
    writeFileSync(join(files, 'worksheet.pdf'), PDF);
    fake = await startOpenAIFake();
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-test-credential-0123456789' },
      configFile: { vetting: { verificationModel: 'gpt-4o-mini' } },
    });
    await gateway.gateway.context.accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
    const made = await gateway.admin('POST', '/admin/v1/keys', { name: 'tutoring-app', scopes: ['model:request'] });
    key = { id: made.body.id, secret: made.body.secret };
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
    await fake?.close();
    rmSync(files, { recursive: true, force: true });
  });

  test('a streamed chat with an image and a PDF arrives piece by piece and is logged under the chosen key', async () => {
    const page = await openPlayground('Chat');
    await page.getByLabel('System prompt').fill('Describe attachments in one sentence.');
    await page.getByLabel('Temperature').fill('0.3');
    await page.getByLabel('Max tokens').fill('64');
    await page.getByLabel('Attach images or PDFs').setInputFiles([join(files, 'pixel.png'), join(files, 'worksheet.pdf')]);
    await page.getByRole('list', { name: 'Attached files' }).getByText('worksheet.pdf').waitFor();
    await page.getByLabel('Message').fill('What do these show?');
    fake.scriptChat({ kind: 'stream-paced', deltas: ['One ', 'white ', 'pixel ', 'and ', 'an ', 'empty ', 'page.'], intervalMs: 150, usage: { promptTokens: 40, completionTokens: 7 } });
    await page.getByRole('button', { name: 'Send' }).click();

    // The text arrives while the stream is open: part of it shows before the rest.
    const streaming = page.locator('[data-streaming="true"]');
    await streaming.filter({ hasText: 'white' }).waitFor();
    assert.doesNotMatch(await streaming.innerText(), /page\./, 'the first pieces show before the last one arrived');
    const answer = page.locator('.turn.assistant').filter({ hasText: 'One white pixel and an empty page.' });
    await answer.waitFor();
    await streaming.waitFor({ state: 'detached' });
    await page.getByText('40 prompt + 7 completion tokens').waitFor();
    await shoot(page, 'playground-chat');

    // What reached the provider: the settings, and both attachments as chat parts.
    const upstream = fake.server.requests.filter((request) => request.path === '/v1/chat/completions').at(-1)!;
    assert.equal(upstream.json.temperature, 0.3);
    assert.equal(upstream.json.max_tokens, 64);
    assert.equal(upstream.json.stream, true);
    assert.deepEqual(upstream.json.messages[0], { role: 'system', content: 'Describe attachments in one sentence.' });
    const parts = upstream.json.messages[1].content as { type: string; image_url?: { url: string }; file?: { filename: string; file_data: string } }[];
    assert.deepEqual(parts.map((part) => part.type), ['text', 'image_url', 'file']);
    assert.equal(parts[1]!.image_url!.url, `data:image/png;base64,${FAKE_PNG_BASE64}`);
    assert.equal(parts[2]!.file!.filename, 'worksheet.pdf');
    assert.equal(parts[2]!.file!.file_data, `data:application/pdf;base64,${Buffer.from(PDF).toString('base64')}`);

    // Show code: curl and the SDK for the next call, the key as a variable, attachments named.
    await page.getByLabel('Message').fill('And now?');
    await page.getByRole('button', { name: 'Show code' }).click();
    const curl = await page.getByLabel('curl', { exact: true }).innerText();
    assert.match(curl, new RegExp(`^curl ${gateway.url}/v1/chat/completions`));
    assert.match(curl, /Authorization: Bearer \$MODELGATE_API_KEY/);
    assert.match(curl, /One white pixel and an empty page\./, 'the conversation so far is in the body');
    const sdk = await page.getByLabel('openai SDK (Node)').innerText();
    assert.match(sdk, /client\.chat\.completions\.create\(/);
    assert.match(sdk, /for await \(const chunk of stream\)/);
    for (const snippet of [curl, sdk]) {
      assert.ok(!snippet.includes(key.secret), 'no secret in a snippet');
      assert.ok(!snippet.includes(FAKE_PNG_BASE64), 'attachments are named, not pasted');
      assert.match(snippet, /data:image\/png;base64,<base64 of the file>/);
    }
    await shoot(page, 'playground-code');

    // The call in the request log, under the chosen key: from the page's link, and in the API.
    const link = page.getByRole('link', { name: /^req_/ });
    const requestId = await link.innerText();
    const record = await loggedRecord(gateway, requestId);
    assert.equal(record.key_id, key.id);
    assert.equal(record.endpoint, '/v1/chat/completions');
    assert.equal(record.platform, 'dashboard-playground');
    assert.equal(record.streaming, true);
    assert.equal(record.usage.total_tokens, 47);
    await page.goto(`${gateway.url}/dashboard/logs?key=${key.id}`);
    // The log shows a key by its name.
    const row = page.getByRole('row').filter({ hasText: 'tutoring-app' }).filter({ hasText: '/v1/chat/completions' }).filter({ hasText: 'dashboard-playground' });
    await row.first().waitFor();
    await shoot(page, 'playground-log');
    await row.first().getByRole('link').click();
    await page.getByRole('heading', { name: `Request ${requestId}` }).waitFor();
    await page.context().close();
  });

  test("a streamed chat through the Gemini API: the answer arrives, Show code is Google's, the call is logged under its endpoint", async () => {
    const page = await openPlayground('Chat');
    await page.getByLabel('API').selectOption('gemini');
    await page.getByLabel('System prompt').fill('Answer in one line.');
    await page.getByLabel('Max tokens').fill('32');
    await page.getByLabel('Message').fill('Say hello through Gemini.');
    fake.scriptChat({ kind: 'stream-paced', deltas: ['Hello ', 'through ', 'the ', 'Gemini ', 'API.'], intervalMs: 100, usage: { promptTokens: 12, completionTokens: 5 } });
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.turn.assistant').filter({ hasText: 'Hello through the Gemini API.' }).waitFor();
    await page.getByText('12 prompt + 5 completion tokens').waitFor();

    // The model (an OpenAI one) got the translation: the system prompt and the limit.
    const upstream = fake.server.requests.filter((request) => request.path === '/v1/chat/completions').at(-1)!;
    assert.deepEqual(upstream.json.messages[0], { role: 'system', content: 'Answer in one line.' });
    assert.equal(upstream.json.stream, true);

    await page.getByLabel('Message').fill('Again?');
    await page.getByRole('button', { name: 'Show code' }).click();
    const curl = await page.getByLabel('curl', { exact: true }).innerText();
    assert.match(curl, new RegExp(`^curl ${gateway.url}/v1beta/models/gpt-4o-mini:streamGenerateContent\\?alt=sse`));
    assert.match(curl, /"role":"model","parts":\[\{"text":"Hello through the Gemini API\."\}\]/, 'the conversation so far, in Google\'s shape');
    const sdk = await page.getByLabel('@google/genai SDK (Node)').innerText();
    assert.match(sdk, /new GoogleGenAI\(\{ apiKey: process\.env\.MODELGATE_API_KEY, httpOptions: \{ baseUrl: '/);
    assert.match(sdk, /client\.models\.generateContentStream\(/);
    assert.match(sdk, /"maxOutputTokens": 32/);
    for (const snippet of [curl, sdk]) assert.ok(!snippet.includes(key.secret), 'no secret in a snippet');
    await shoot(page, 'playground-gemini');

    const record = await loggedRecord(gateway, await page.getByRole('link', { name: /^req_/ }).innerText());
    assert.equal(record.key_id, key.id);
    assert.equal(record.endpoint, '/v1beta/models/{model}:streamGenerateContent');
    assert.equal(record.platform, 'dashboard-playground');
    assert.equal(record.usage.total_tokens, 17);
    await page.context().close();
  });

  test('a VETTING run shows the rejected and the accepted attempt side by side', async () => {
    const page = await openPlayground('VETTING');
    fake.scriptChat(REJECTED_THEN_ACCEPTED.script());
    const { rejected, accepted } = REJECTED_THEN_ACCEPTED;
    await page.getByLabel('Verifier rules (vettingConfig.systemPrompt)').fill('Never state the product.');
    await page.getByLabel('Max attempts').fill('3');
    await page.getByLabel('Student message').fill('What is 6 times 7?');
    await page.getByRole('button', { name: 'Run VETTING' }).click();

    const attempts = page.getByRole('list', { name: 'Attempts' }).getByRole('listitem');
    await attempts.nth(1).waitFor();
    assert.equal(await attempts.count(), 2);
    const [first, second] = [attempts.nth(0), attempts.nth(1)];
    const textOf = async (attempt: typeof first) => (await attempt.innerText()).replace(/\s+/g, ' ').trim();
    assert.equal(await textOf(first), `Attempt 1 rejected Draft ${rejected.draft} Reason ${rejected.reason}`);
    assert.equal(await textOf(second), `Attempt 2 passed Draft ${accepted.draft} Reason ${accepted.reason}`);
    // Side by side: one row, the second to the right of the first.
    const [left, right] = [await first.boundingBox(), await second.boundingBox()];
    assert.ok(left !== null && right !== null && right.x > left.x + left.width - 1 && Math.abs(right.y - left.y) < 2);
    await page.getByText('VERIFICATION_PASSED').waitFor();
    assert.equal(await page.locator('.final-reply').innerText(), accepted.draft);
    await shoot(page, 'playground-vetting');

    const requestId = await page.getByRole('link', { name: /^req_/ }).innerText();
    const record = await loggedRecord(gateway, requestId);
    assert.equal(record.key_id, key.id);
    assert.equal(record.endpoint, '/v1/chat/vetting');

    // The answer-key endpoint: a draft that states the answer fails the local check (no
    // verification call), the redraft passes the verifier.
    fake.scriptChat({
      kind: 'sequence',
      scripts: [
        { kind: 'reply', text: 'Six times seven is 42.', usage: { promptTokens: 20, completionTokens: 6 } },
        { kind: 'reply', text: accepted.draft, usage: { promptTokens: 25, completionTokens: 11 } },
        { kind: 'reply', text: JSON.stringify({ passed: true, reason: accepted.reason, requires_attention: false }), usage: { promptTokens: 30, completionTokens: 9 } },
      ],
    });
    await page.getByLabel('Answer key (/v1/vetting/full)').check();
    await page.getByLabel('Question').fill('What is 6 times 7?');
    await page.getByLabel('Correct answer').fill('42');
    await page.getByLabel('Key concepts (comma-separated)').fill('multiplication table of 7');
    await page.getByRole('button', { name: 'Run VETTING' }).click();
    await attempts.filter({ hasText: 'Six times seven is 42.' }).waitFor();
    await page.getByText('VERIFICATION_PASSED after 2 attempts').waitFor();
    assert.match(await textOf(attempts.nth(0)), /^Attempt 1 rejected Draft Six times seven is 42\. Reason The draft stated a protected answer or key concept \(local check/);
    assert.equal(await textOf(attempts.nth(1)), `Attempt 2 passed Draft ${accepted.draft} Reason ${accepted.reason}`);
    const full = await loggedRecord(gateway, await page.getByRole('link', { name: /^req_/ }).innerText());
    assert.equal(full.endpoint, '/v1/vetting/full');
    assert.equal(full.key_id, key.id);

    // On a phone the settings and the attempts stack, one under the other.
    await page.setViewportSize({ width: 390, height: 844 });
    const [top, below] = [await attempts.nth(0).boundingBox(), await attempts.nth(1).boundingBox()];
    assert.ok(top !== null && below !== null && below.y >= top.y + top.height && below.width <= 390);
    assert.ok(await page.locator('html').evaluate((html) => html.scrollWidth <= 390), 'nothing wider than the phone');
    await shoot(page, 'playground-phone');
    await page.context().close();
  });

  test('embeddings, an image and speech from the same page', async () => {
    const page = await openPlayground('Embeddings');
    await page.getByLabel('Text').fill('The cat sat on the mat.');
    await page.getByRole('button', { name: 'Embed' }).click();
    await page.getByTestId('embedding-dimensions').filter({ hasText: /^\d+ dimensions/ }).waitFor();
    await shoot(page, 'playground-embeddings');

    await page.getByRole('tab', { name: 'Images' }).click();
    await page.getByLabel('Prompt').fill('A single white pixel');
    await page.getByRole('button', { name: 'Generate' }).click();
    const image = page.locator('figure.generated img');
    await image.waitFor();
    assert.ok(await image.evaluate((element) => (element as { complete: boolean; naturalWidth: number }).complete && (element as { naturalWidth: number }).naturalWidth === 1), 'the generated image is drawn');
    await page.getByText('A revised prompt.').waitFor();
    await shoot(page, 'playground-images');

    await page.getByRole('tab', { name: 'Speech' }).click();
    await page.getByLabel('Text').fill('Hello there.');
    await page.getByRole('button', { name: 'Speak' }).click();
    await page.getByLabel('Generated speech', { exact: true }).waitFor();
    await page.getByText(/^audio\/mpeg, \d+ bytes$/).waitFor();

    const requestId = await page.getByRole('link', { name: /^req_/ }).innerText();
    const record = await loggedRecord(gateway, requestId);
    assert.equal(record.key_id, key.id);
    assert.equal(record.endpoint, '/v1/audio/speech');
    await page.context().close();
    assert.deepEqual(problems, []);
  });
});
