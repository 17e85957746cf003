import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import OpenAI from 'openai';
import type { Static } from '@sinclair/typebox';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import type { ErrorBody } from '../src/errors/index.js';
import type {
  DocsMetadataResponseSchema,
  ModelListResponseSchema,
  StatusResponseSchema,
} from '../src/server/routes/status-schemas.js';

type StatusBody = Static<typeof StatusResponseSchema>;
type ModelListBody = Static<typeof ModelListResponseSchema>;
type MetadataBody = Static<typeof DocsMetadataResponseSchema>;

/** The spec's entry fields, and `created` of OpenAI's model object (decisions §9). */
const ENTRY_FIELDS = [
  'id', 'object', 'created', 'mode', 'endpoint', 'description', 'owned_by', 'intelligence', 'speed', 'input_modalities',
  'output_modalities', 'context_window', 'max_output_tokens', 'supports_streaming', 'capabilities', 'pricing',
];
const CAPABILITY_KEYS = ['text', 'images', 'files', 'pdf', 'audio', 'tools', 'embeddings', 'image_generation'];
/** The spec's pricing fields, then the gateway's own: cache-write prices and long-prompt tiers. */
const PRICING_KEYS = [
  'input_per_million', 'output_per_million', 'cached_input_per_million', 'image_per_unit', 'audio_per_minute', 'status', 'note',
  'cache_write_per_million', 'cache_write_1h_per_million', 'tiers',
];

async function getJson<T>(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
  const response = await fetch(url, { headers });
  return { status: response.status, body: (await response.json()) as T };
}

/** GET with a raw Host header (fetch does not let a caller set Host). */
function getWithHost(url: string, host: string, extraHeaders: Record<string, string> = {}): Promise<StatusBody> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: { host, ...extraHeaders } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve(JSON.parse(text) as StatusBody));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('status routes', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway();
  });
  after(async () => {
    await gateway.close();
  });

  test('GET / reports status, documentation, metadata and the models, without a key', async () => {
    const { status, body } = await getJson<StatusBody>(`${gateway.url}/`);
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body).sort(), ['dashboard', 'default_model', 'documentation', 'message', 'metadata', 'status', 'supported_models', 'upcoming_models']);
    assert.equal(body.status, 'ok');
    assert.equal(typeof body.message, 'string');
    assert.equal(body.documentation, `${gateway.url}/docs`);
    assert.equal(body.dashboard, `${gateway.url}/dashboard/`);
    assert.equal(body.metadata, '/v1/docs/metadata');
    assert.equal(body.default_model, gateway.gateway.context.catalog.defaultChatModel);
    assert.deepEqual(body.upcoming_models, []);
    const models = await getJson<ModelListBody>(`${gateway.url}/v1/models`);
    assert.deepEqual(body.supported_models, models.body.available_models.map((entry) => entry.id));
    assert.ok(body.supported_models.includes(body.default_model));

    const docs = await fetch(body.documentation);
    assert.equal(docs.status, 200);
    assert.match(docs.headers.get('content-type') ?? '', /text\/html/);
    await docs.body?.cancel();
  });

  test('the documentation link is the listen address, whatever Host or X-Forwarded-* say', async () => {
    const port = new URL(gateway.url).port;
    for (const [host, headers] of [
      ['attacker.example', {}],
      [`gateway.internal:${port}`, {}],
      ['evil.example/phish?x=', {}],
      [`gateway.internal:${port}`, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'attacker.example' }],
    ] as const) {
      const status = await getWithHost(`${gateway.url}/`, host, headers);
      assert.equal(status.documentation, `${gateway.url}/docs`, host);
    }
  });

  test('public routes answer even with a wrong key', async () => {
    for (const path of ['/', '/v1/models', '/v1/docs/metadata']) {
      const { status } = await getJson<unknown>(`${gateway.url}${path}`, { authorization: 'Bearer sk-mg-not-a-real-key' });
      assert.equal(status, 200, path);
    }
  });

  test('GET /v1/models lists every entry with the fields of the spec', async () => {
    const { status, body } = await getJson<ModelListBody>(`${gateway.url}/v1/models`);
    assert.equal(status, 200);
    assert.equal(body.object, 'list');
    assert.equal(body.default_model, gateway.gateway.context.catalog.defaultChatModel);
    assert.deepEqual(body.data, body.available_models);
    const ids = new Set(body.available_models.map((entry) => entry.id));
    for (const [alias, target] of Object.entries(body.aliases)) {
      assert.ok(ids.has(target as string), `alias ${alias} points to listed ${String(target)}`);
      assert.ok(!ids.has(alias), `legacy alias ${alias} is not a model entry`);
    }
    for (const entry of body.available_models) {
      const expected = entry.default_voice === undefined ? ENTRY_FIELDS : [...ENTRY_FIELDS, 'default_voice'];
      assert.deepEqual(Object.keys(entry).sort(), [...expected].sort(), entry.id);
      assert.equal(entry.object, 'model');
      assert.deepEqual(Object.keys(entry.capabilities).sort(), [...CAPABILITY_KEYS].sort(), entry.id);
      if (entry.pricing !== null) assert.deepEqual(Object.keys(entry.pricing).sort(), [...PRICING_KEYS].sort(), entry.id);
    }
    const services = body.available_models.filter((entry) => entry.owned_by === 'modelgate');
    assert.deepEqual(services.map((entry) => entry.id), ['service-1', 'service-2', 'service-3', 'service-4', 'service-5']);
    const owners = new Set(body.available_models.map((entry) => entry.owned_by));
    for (const owner of ['openai', 'google', 'anthropic']) assert.ok(owners.has(owner), owner);
    const pricingOf = (id: string) => body.available_models.find((entry) => entry.id === id)!.pricing!;
    const sonnet = pricingOf('claude-sonnet-4-5');
    assert.deepEqual([sonnet.cached_input_per_million, sonnet.cache_write_per_million, sonnet.cache_write_1h_per_million], [0.3, 3.75, 6]);
    assert.deepEqual(pricingOf('gemini-2.5-pro').tiers, [
      { above_prompt_tokens: 200_000, input_per_million: 2.5, output_per_million: 15, cached_input_per_million: 0.25, cache_write_per_million: null, cache_write_1h_per_million: null },
    ]);
    const speech = body.available_models.find((entry) => entry.id === 'tts-1')!;
    assert.equal(speech.default_voice, 'alloy');
    assert.equal(speech.context_window, null);
  });

  test('the openai SDK lists the models', async () => {
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused-for-public-routes' });
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.ok(ids.includes('service-1'));
    assert.ok(ids.includes(gateway.gateway.context.catalog.defaultChatModel));
  });

  test('the openai SDK retrieves one model by id, service alias or legacy alias; an unknown one is a 404 naming close ids', async () => {
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused-for-public-routes', maxRetries: 0 });
    const { body: list } = await getJson<ModelListBody>(`${gateway.url}/v1/models`);
    for (const id of ['gpt-4o', 'service-1', 'text-embedding-3-small']) {
      const model = await client.models.retrieve(id);
      assert.deepEqual(model, list.available_models.find((entry) => entry.id === id));
    }
    assert.equal((await client.models.retrieve('gpt4o')).id, list.aliases.gpt4o);
    await assert.rejects(client.models.retrieve('gpt-4x'), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError);
      assert.equal((error.error as { code: string }).code, 'not_found');
      assert.match(error.message, /The model "gpt-4x" is not a model of this gateway\. Did you mean "gpt-4o"/);
      return true;
    });
  });

  test('GET /v1/docs/metadata holds the catalog, endpoints, quickstarts, examples and pricing notes', async () => {
    const { status, body } = await getJson<MetadataBody>(`${gateway.url}/v1/docs/metadata`);
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body).sort(), ['endpoints', 'models', 'playground_examples', 'pricing_notes', 'quickstarts', 'version']);
    assert.equal(body.version, '1.4.2');
    const models = await getJson<ModelListBody>(`${gateway.url}/v1/models`);
    assert.deepEqual(body.models, models.body.available_models);

    const endpoint = (method: string, path: string) =>
      body.endpoints.find((candidate) => candidate.method === method && candidate.path === path);
    for (const path of ['/', '/v1/models', '/v1/docs/metadata']) assert.equal(endpoint('GET', path)?.auth, 'none', path);
    const keyed: [string, string][] = [
      ['/v1/chat/completions', 'model:request'],
      ['/v1/messages', 'model:request'],
      ['/v1/messages/count_tokens', 'model:request'],
      ['/v1beta/models/{model}:generateContent', 'model:request'],
      ['/v1beta/models/{model}:streamGenerateContent', 'model:request'],
      ['/v1/chat/vetting', 'model:request'],
      ['/v1/vetting/full', 'model:request'],
      ['/v1/embeddings', 'model:request'],
      ['/v1/images/generations', 'model:request'],
      ['/v1/audio/speech', 'model:request'],
      ['/v1/audio/transcriptions', 'model:request'],
      ['/v1/agents/{slug}/runs', 'agents:execute'],
      ['/v1/utils/encrypt', 'utils:crypto'],
      ['/v1/utils/decrypt', 'utils:crypto'],
    ];
    for (const [path, scope] of keyed) {
      const found = endpoint('POST', path);
      assert.ok(found !== undefined, path);
      assert.equal(found.auth, 'api_key', path);
      assert.equal(found.scope, scope, path);
      assert.ok(found.description.length > 0, path);
    }
    assert.ok(!body.endpoints.some((candidate) => candidate.path.startsWith('/admin')));
    // The list is the route table's: every public operation of the OpenAPI document, with its
    // summary and description, and nothing else but the two reference pages.
    const openapi = await getJson<{ paths: Record<string, Record<string, { summary?: string; description?: string; tags?: string[] }>> }>(`${gateway.url}/openapi.json`);
    const documented = Object.entries(openapi.body.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([method, operation]) => method !== 'head' && !(operation.tags ?? []).includes('admin') && (path === '/' || path.startsWith('/v1/') || path.startsWith('/v1beta/')))
        .map(([method, operation]) => `${method.toUpperCase()} ${path}: ${[operation.summary, operation.description].filter(Boolean).join('. ')}`),
    );
    const listed = body.endpoints.filter((candidate) => candidate.path !== '/openapi.json' && candidate.path !== '/docs');
    assert.deepEqual(listed.map((candidate) => `${candidate.method} ${candidate.path}: ${candidate.description}`).sort(), documented.sort());
    assert.ok(endpoint('GET', '/openapi.json') !== undefined && endpoint('GET', '/docs') !== undefined);

    const defaultModel = models.body.default_model;
    const byId = new Map(body.quickstarts.map((quickstart) => [quickstart.id, quickstart]));
    for (const id of ['chat-curl', 'chat-python', 'chat-node']) {
      const quickstart = byId.get(id) as { code: string } | undefined;
      assert.ok(quickstart !== undefined, id);
      assert.ok(quickstart.code.includes(gateway.url), `${id} uses the running base URL`);
      assert.ok(quickstart.code.includes(defaultModel), `${id} uses the default model`);
    }
    assert.match((byId.get('chat-python') as { code: string }).code, new RegExp(`base_url="${gateway.url}/v1"`));

    const supported = new Set(models.body.available_models.map((entry) => entry.id));
    assert.ok(body.playground_examples.length >= 3);
    for (const example of body.playground_examples) {
      assert.ok(endpoint(example.method, example.path) !== undefined, `${example.id} targets a listed endpoint`);
      assert.ok(supported.has(String(example.body.model)), `${example.id} uses a listed model`);
    }
    assert.ok(body.pricing_notes.length > 0);
    for (const note of body.pricing_notes) assert.equal(typeof note, 'string');
    assert.ok(body.pricing_notes.some((note: string) => note.includes('starts_at')));
  });

  test('every response carries x-request-id, and an unknown route is a documented 404', async () => {
    for (const path of ['/', '/v1/models', '/v1/docs/metadata', '/openapi.json', '/docs']) {
      const before = Date.now();
      const response = await fetch(`${gateway.url}${path}`);
      const id = response.headers.get('x-request-id') ?? '';
      assert.match(id, /^req_[0-9a-f]{32}$/, path);
      // Ids begin with the time in milliseconds, so the log's primary key grows in time order.
      const time = Number.parseInt(id.slice(4, 16), 16);
      assert.ok(time >= before && time <= Date.now(), `${path}: ${id} begins with the time of the request`);
      await response.body?.cancel();
    }
    const ids = new Set<string>();
    for (const [method, path] of [['GET', '/v1/nothing'], ['POST', '/v2/chat/completions'], ['DELETE', '/v1/models']] as const) {
      const response = await fetch(`${gateway.url}${path}`, {
        method,
        ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}),
      });
      assert.equal(response.status, 404, `${method} ${path}`);
      const requestId = response.headers.get('x-request-id')!;
      ids.add(requestId);
      const body = (await response.json()) as ErrorBody;
      assert.deepEqual(Object.keys(body), ['error']);
      assert.equal(body.error.type, 'invalid_request_error');
      assert.equal(body.error.code, 'not_found');
      assert.equal(body.error.param, null);
      assert.equal(body.error.request_id, requestId);
      assert.ok(body.error.message.includes(path), 'the message names the route');
    }
    assert.equal(ids.size, 3, 'each request gets its own id');
  });
});

describe('status routes with operator settings', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway({
      configFile: {
        // A trailing slash is dropped.
        server: { trustProxy: true, publicUrl: 'https://api.example.com/gateway/' },
        catalog: {
          defaultModel: 'claude-haiku-4-5',
          aliases: { fast: 'gemini-2.5-flash' },
          models: [{ id: 'gpt-4o', disabled: true }],
        },
        providers: {
          compatible: [{ name: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', models: [{ id: 'llama3.2', context_window: 131072 }, { id: 'hf.co/org/model:Q4' }] }],
        },
      },
    });
  });
  after(async () => {
    await gateway.close();
  });

  test('the catalog shown is the configured one', async () => {
    const { body } = await getJson<ModelListBody>(`${gateway.url}/v1/models`);
    assert.equal(body.default_model, 'claude-haiku-4-5');
    assert.equal(body.aliases.fast, 'gemini-2.5-flash');
    assert.equal(body.aliases.gpt4o, undefined);
    const ids = body.available_models.map((entry) => entry.id);
    assert.ok(!ids.includes('gpt-4o'));
    const llama = body.available_models.find((entry) => entry.id === 'llama3.2')!;
    assert.equal(llama.owned_by, 'ollama');
    assert.equal(llama.context_window, 131072);
    assert.equal(llama.pricing, null);
    const status = await getJson<StatusBody>(`${gateway.url}/`);
    assert.equal(status.body.default_model, 'claude-haiku-4-5');
    // An id with slashes is retrieved whole.
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused-for-public-routes', maxRetries: 0 });
    assert.equal((await client.models.retrieve('hf.co/org/model:Q4')).owned_by, 'ollama');
  });

  test('with server.publicUrl every generated URL uses it, even behind a trusted proxy that forwards another host', async () => {
    const forwarded = { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'attacker.example' };
    const { body } = await getJson<StatusBody>(`${gateway.url}/`, forwarded);
    assert.equal(body.documentation, 'https://api.example.com/gateway/docs');
    const metadata = await getJson<MetadataBody>(`${gateway.url}/v1/docs/metadata`, forwarded);
    const curl = metadata.body.quickstarts.find((quickstart) => quickstart.id === 'chat-curl')!;
    assert.match(curl.code, /^curl https:\/\/api\.example\.com\/gateway\/v1\/chat\/completions/);
    assert.equal((await getWithHost(`${gateway.url}/`, 'attacker.example')).documentation, 'https://api.example.com/gateway/docs');
  });
});
