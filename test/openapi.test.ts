import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { chromium, type Browser } from 'playwright-core';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

type ObjectSchema = { properties?: Record<string, { items?: { properties?: Record<string, unknown> } }> };

interface Operation {
  summary?: string;
  responses: Record<string, { content: Record<string, { schema?: ObjectSchema & { anyOf?: ObjectSchema[] } }> }>;
}
interface OpenApiDocument {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation | undefined> | undefined>;
}

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // A non-loopback name for the gateway: browsers treat loopback specially (for example when
  // upgrading insecure requests), and operators reach the docs by a host name.
  '--host-resolver-rules=MAP gateway.test 127.0.0.1',
];

describe('OpenAPI document and API reference', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway();
  });
  after(async () => {
    await gateway.close();
  });

  test('/openapi.json is a valid OpenAPI 3.1 document, version 1.4.2, without admin routes', async () => {
    const response = await fetch(`${gateway.url}/openapi.json`);
    assert.equal(response.status, 200);
    const document = (await response.json()) as OpenApiDocument & Record<string, unknown>;
    const validator = new Validator();
    const result = await validator.validate(document);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(validator.version, '3.1');
    assert.equal(document.openapi, '3.1.0');
    assert.equal(document.info.version, '1.4.2');

    const paths = Object.keys(document.paths);
    assert.deepEqual(paths.filter((path) => path.startsWith('/admin')), [], 'admin routes are not public');
    assert.ok(!paths.some((path) => path.startsWith('/docs') || path === '/openapi.json'), 'the reference pages document nothing');
    for (const path of ['/', '/v1/models', '/v1/docs/metadata']) {
      const operation = document.paths[path]?.get;
      assert.ok(operation !== undefined, `GET ${path} is documented`);
      assert.equal(typeof operation.summary, 'string', path);
      assert.ok(operation.responses['200']?.content['application/json']?.schema !== undefined, `${path} documents its response`);
    }
    // Path parameters as the callers write them, not the router's wildcard.
    assert.ok(paths.includes('/v1/models/{model}'), paths.join(', '));
    // A colon only as the Gemini API's paths have one, after the model (`/v1beta/models/{model}:generateContent`).
    assert.ok(!paths.some((path) => path.includes('{*}') || /(^|[^}]):/.test(path)), paths.join(', '));
    assert.ok(paths.includes('/v1beta/models/{model}:generateContent'), paths.join(', '));
    const retrieve = document.paths['/v1/models/{model}']?.get as { parameters?: { name: string; in: string }[] } | undefined;
    assert.deepEqual(retrieve?.parameters?.map((parameter) => [parameter.name, parameter.in]), [['model', 'path']]);
    // The list in OpenAI's shape, or (with anthropic-version) in the Messages API's.
    const listSchemas = document.paths['/v1/models']?.get?.responses['200']?.content['application/json']?.schema?.anyOf;
    assert.ok(listSchemas?.[0]?.properties?.available_models?.items?.properties?.pricing !== undefined, 'the model entry schema is documented');
    assert.ok(listSchemas?.[1]?.properties?.data?.items?.properties?.display_name !== undefined, 'the Messages API list shape is documented');
    // The Messages paths document Anthropic's error shape, not §4's.
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const errorSchema = document.paths[path]?.post?.responses['4XX']?.content['application/json']?.schema;
      assert.deepEqual(Object.keys(errorSchema?.properties ?? {}), ['type', 'error', 'request_id'], path);
    }
  });

  test('the page\'s own copies of the document send to the one URL, which GET / names', async () => {
    for (const copy of ['/docs/json', '/docs/yaml']) {
      const response = await fetch(`${gateway.url}${copy}`, { redirect: 'manual' });
      assert.equal(response.status, 301, copy);
      assert.equal(response.headers.get('location'), '/openapi.json');
    }
    const status = (await (await fetch(`${gateway.url}/`)).json()) as { documentation: string; message: string };
    assert.equal(status.documentation, `${gateway.url}/docs`);
    assert.match(status.message, /its OpenAPI document at \/openapi\.json/);
  });

  test(
    '/docs renders the operations in a real browser, from the gateway alone',
    { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` },
    async () => {
      const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      try {
        const port = new URL(gateway.url).port;
        for (const origin of [gateway.url, `http://gateway.test:${port}`]) {
          const page = await browser.newPage();
          const requested: string[] = [];
          const problems: string[] = [];
          page.on('request', (request) => requested.push(request.url()));
          page.on('requestfailed', (request) => problems.push(`failed ${request.url()}: ${request.failure()?.errorText}`));
          page.on('console', (message) => {
            if (message.type() === 'error') problems.push(`console: ${message.text()}`);
          });
          page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));

          const response = await page.goto(`${origin}/docs`, { waitUntil: 'networkidle' });
          assert.equal(response?.status(), 200);
          const operation = page.locator('.opblock-get', { has: page.locator('[data-path="/v1/models"]') });
          await operation.waitFor({ state: 'visible', timeout: 15_000 });
          assert.match(await operation.innerText(), /GET\s+\/v1\/models/);
          assert.ok((await page.locator('.opblock').count()) >= 3, `${origin}: every operation is rendered`);
          assert.match(await page.locator('.info .title').innerText(), /modelgate/);
          assert.equal(await page.title(), 'modelgate API reference');
          // The product's logo, not the framework's: the top bar shows the modelgate mark.
          const logo = page.locator('.topbar a img');
          await logo.waitFor({ state: 'visible', timeout: 15_000 });
          const logoSource = (await logo.getAttribute('src')) ?? '';
          assert.match(logoSource, /^data:image\/svg\+xml;base64,/);
          assert.match(Buffer.from(logoSource.split(',')[1]!, 'base64').toString('utf8'), /aria-label="modelgate"/);
          assert.ok(!/swagger/i.test(await page.locator('.topbar').innerHTML()), 'no Swagger branding in the top bar');
          const icon = await page.locator('link[rel="icon"]').first().getAttribute('href');
          assert.match(icon ?? '', /modelgate\.svg$/);
          // The operation is shown with its path parameter as callers write it.
          assert.equal(await page.locator('[data-path="/v1/models/{model}"]').count(), 1);

          assert.ok(requested.length > 1, 'the page loaded its assets');
          const foreign = requested.filter((url) => new URL(url).origin !== origin);
          assert.deepEqual(foreign, [], `${origin}: every request goes to the gateway itself`);
          assert.deepEqual(problems, [], `${origin}: the page works under its Content-Security-Policy`);
          await page.close();
        }
      } finally {
        await browser.close();
      }
    },
  );
});
