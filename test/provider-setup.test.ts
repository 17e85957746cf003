import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startupReport } from '../src/cli/startup-report.js';

/**
 * A gateway started without a vendor's credential (the README's first run, before
 * OPENAI_API_KEY is exported): its models are not listed, and a call for one is refused with
 * what the operator must set, not with a provider error that hides the cause.
 */
describe('a provider without a credential', () => {
  let gateway: TestGateway;
  let client: OpenAI;
  before(async () => {
    gateway = await startTestGateway({ env: { OPENAI_API_KEY: '' } });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: await gateway.createKey(), maxRetries: 0 });
  });
  after(async () => {
    await gateway.close();
  });

  test('a chat call for its model is a 503 provider_not_configured naming the variable to set', async () => {
    for (const model of ['gpt-4o', 'service-1', 'gpt4o', 'gpt-5-future']) {
      const error = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] }).then(
        () => assert.fail(`${model} was served`),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof OpenAI.APIError, model);
      assert.equal(error.status, 503, model);
      assert.equal(error.code, 'provider_not_configured', model);
      assert.match(error.message, /provider \(openai\) is not configured on this gateway: the operator must set OPENAI_API_KEY/, model);
    }
  });

  test('the request log names the reason for the operator', async () => {
    const response = await fetch(`${gateway.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await gateway.createKey()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'text-embedding-3-small', input: 'x' }),
    });
    assert.equal(response.status, 503);
    const requestId = response.headers.get('x-request-id')!;
    await gateway.gateway.context.logs.writer.flush();
    const record = await gateway.admin('GET', `/admin/v1/logs/${requestId}`);
    assert.equal(record.body.error_code, 'provider_not_configured');
  });

  test('GET /v1/models and GET / list only the models of configured providers', async () => {
    const list = await client.models.list();
    const ids = list.data.map((model) => model.id);
    assert.ok(ids.length > 0);
    assert.ok(!ids.includes('gpt-4o'), 'an OpenAI model is listed');
    assert.ok(!ids.includes('service-1'), 'a service alias of an OpenAI model is listed');
    assert.ok(ids.includes('gemini-2.5-flash') && ids.includes('service-3') && ids.includes('claude-sonnet-4-5'));
    const catalog = (await (await fetch(`${gateway.url}/v1/models`)).json()) as { aliases: Record<string, string>; default_model: string };
    assert.equal(catalog.aliases.gpt4o, undefined);
    assert.equal(catalog.aliases['gemini-flash'], 'gemini-2.5-flash');
    const status = (await (await fetch(`${gateway.url}/`)).json()) as { supported_models: string[] };
    assert.deepEqual(status.supported_models, ids);
  });

  test('GET /v1/models/{model} of such a model is a 404 that says why', async () => {
    const response = await fetch(`${gateway.url}/v1/models/gpt-4o`);
    assert.equal(response.status, 404);
    const body = (await response.json()) as { error: { message: string } };
    assert.match(body.error.message, /its provider \(openai\) is not configured on this gateway/);
  });
});

describe('the start-up report', () => {
  test('names the providers without a credential, and the dashboard', async () => {
    const gateway = await startTestGateway({ env: { GEMINI_API_KEY: '' } });
    try {
      const report = startupReport(gateway.gateway, '/srv/modelgate.yaml');
      const text = report.lines.join('\n');
      assert.match(text, /^ {2}config file {2}\/srv\/modelgate\.yaml$/m);
      assert.match(text, /providers {4}openai \(https:\/\/api\.openai\.com\/v1, API key\)\n +anthropic \(.*\)\n +not configured, their models are not served: gemini \(set GEMINI_API_KEY\)/);
      assert.ok(text.includes(`dashboard    ${gateway.url}/dashboard/`), text);
      assert.deepEqual((report.fields.providers_not_configured as { name: string }[])[0], { name: 'gemini', variable: 'GEMINI_API_KEY' });
      assert.ok(!(report.fields.providers_not_configured as { name: string }[]).some((provider) => provider.name === 'openai'));
    } finally {
      await gateway.close();
    }
  });
});
