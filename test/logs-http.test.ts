import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { MAX_TIMER_MS } from '../src/config/index.js';
import type { RouteModule } from '../src/server/app.js';
import { ROUTE_MODULES } from '../src/server/routes/index.js';
import { loggedRecord, startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, FAKE_PNG_BASE64, type OpenAIFake } from './fakes/openai.js';
import { startBackendGateway, STORAGE_BACKENDS, type BackendGateway } from './helpers/storage-backends.js';

const UPSTREAM_KEY = 'sk-upstream-test-credential-0123456789';
// Assembled at run time: an obviously fake value with a vendor key's shape, which is what redaction matches.
const LEAKED_VENDOR_KEY = ['sk-proj-', 'LeakedInAPromptAbcdefghijklmnop'].join('');

function clientFor(gateway: TestGateway, key: string, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0, defaultHeaders: headers });
}

/** A cursor as the API encodes one, of any values. */
function cursorOf(values: unknown): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

async function post(gateway: TestGateway, path: string, headers: Record<string, string>, body: unknown) {
  const response = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  await response.arrayBuffer();
  return { status: response.status, requestId: response.headers.get('x-request-id')! };
}

describe('request log over HTTP', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let key: string;
  let keyId: string;

  before(async () => {
    fake = await startOpenAIFake();
    // The longest upstream timeouts a timer can wait: a cancelled stream's record waits for both.
    const longest = String(MAX_TIMER_MS);
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: UPSTREAM_KEY, MODELGATE_UPSTREAM_TIMEOUT_MS: longest, MODELGATE_STREAM_IDLE_TIMEOUT_MS: longest },
    });
    key = await gateway.createKey({ projectId: 'research' });
    keyId = (await gateway.admin('GET', '/admin/v1/keys')).body.data[0].id;
  });
  after(async () => {
    await gateway.close();
    await fake.close();
  });

  test('a chat call is logged with every field of the spec, cost exact to the micro-dollar', async () => {
    fake.scriptChat({ kind: 'reply', text: 'Paris.', usage: { promptTokens: 5, completionTokens: 4 } });
    const client = clientFor(gateway, key, { 'X-Platform-ID': 'web-app' });
    const { response } = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: `Capital of France? my key is ${LEAKED_VENDOR_KEY}` }] })
      .withResponse();
    const requestId = response.headers.get('x-request-id')!;
    const record = await loggedRecord(gateway, requestId);
    assert.equal(record.request_id, requestId);
    assert.equal(record.platform, 'web-app');
    assert.equal(record.key_id, keyId);
    assert.equal(record.project_id, 'research');
    assert.match(record.fingerprint, new RegExp(`^${keyId}…[A-Za-z0-9]{4}$`));
    assert.equal(record.requested_model, 'gpt-4o');
    assert.equal(record.resolved_model, 'gpt-4o');
    assert.equal(record.mode, 'chat');
    assert.equal(record.endpoint, '/v1/chat/completions');
    assert.equal(record.status, 200);
    assert.equal(record.streaming, false);
    assert.ok(record.latency_ms >= 0 && record.upstream_latency_ms >= 0);
    assert.deepEqual(record.usage, { prompt_tokens: 5, completion_tokens: 4, cached_tokens: 0, total_tokens: 9 });
    // gpt-4o: 5 × $2.50/M + 4 × $10/M = 52.5 µ$ → 53 µ$ (half-up).
    assert.equal(record.cost_usd, 0.000053);
    assert.equal(record.request_payload.messages[0].content, 'Capital of France? my key is [redacted]');
    assert.equal(record.response_payload.choices[0].message.content, 'Paris.');
    assert.ok(!JSON.stringify(record).includes(UPSTREAM_KEY));
  });

  test('a large body is logged as received, its secrets redacted, through the bytes handed to the log', async () => {
    // Past 64 KiB a body kept as received reaches the log's thread as its bytes, parsed there.
    const filler = 'lorem ipsum dolor sit amet, '.repeat(4000);
    fake.scriptChat({ kind: 'reply', text: 'Read it.', usage: { promptTokens: 30_000, completionTokens: 3 } });
    // A key of its own: the usage tests below count this key's records.
    const { response } = await clientFor(gateway, await gateway.createKey({ projectId: 'large-bodies' }))
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: `${filler}my key is ${LEAKED_VENDOR_KEY}` }] })
      .withResponse();
    const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
    assert.equal(record.request_payload.model, 'gpt-4o');
    assert.equal(record.request_payload.messages[0].content, `${filler}my key is [redacted]`);
    assert.ok(!JSON.stringify(record).includes(LEAKED_VENDOR_KEY));
  });

  test('a call hands a large body kept as received to the log as its bytes, a small one or a changed one as the object', () => {
    const caller = { keyId: null, projectId: null, fingerprint: null };
    const finish = (body: unknown, bytes: Buffer, payload: unknown) => {
      const call = gateway.gateway.context.calls.begin({ requestId: `bytes-${bytes.length}-${payload === body}`, endpoint: '/v1/chat/completions', platform: null, startedAt: Date.now() });
      call.receivedJson(body, bytes);
      call.describe({ mode: 'chat', payload });
      return call.finish({ status: 400, caller }).record;
    };
    const large = { model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(70_000) }] };
    const largeBytes = Buffer.from(JSON.stringify(large));
    const kept = finish(large, largeBytes, large);
    assert.equal(kept.requestPayload, null);
    assert.equal(kept.requestPayloadJson, largeBytes);
    const changed = { ...large, model: 'gpt-4o-mini' };
    assert.equal(finish(large, largeBytes, changed).requestPayload, changed, 'a payload the route changed is logged as the object');
    const small = { model: 'gpt-4o', messages: [] };
    const smallRecord = finish(small, Buffer.from(JSON.stringify(small)), small);
    assert.equal(smallRecord.requestPayload, small);
    assert.equal(smallRecord.requestPayloadJson, undefined);
  });

  test('a body its schema refuses is logged as received, with the model it named and its secrets redacted', async () => {
    const refused = await post(gateway, '/v1/messages', { 'x-api-key': key }, { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: `see ${LEAKED_VENDOR_KEY}` }] });
    assert.equal(refused.status, 400, 'max_tokens is required');
    const record = await loggedRecord(gateway, refused.requestId);
    assert.equal(record.requested_model, 'claude-sonnet-4-5');
    assert.equal(record.error_code, 'invalid_body');
    assert.equal(record.request_payload.messages[0].content, 'see [redacted]');
    assert.match(String(record.detail.error_message), /max_tokens/);
  });

  test('a streamed chat is logged when the stream ends, with its usage', async () => {
    fake.scriptChat({ kind: 'stream', deltas: ['Hel', 'lo'], usage: { promptTokens: 3, completionTokens: 2 } });
    const client = clientFor(gateway, key);
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })
      .withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(text, 'Hello');
    const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
    assert.equal(record.streaming, true);
    assert.equal(record.status, 200);
    assert.equal(record.usage.total_tokens, 5);
    // The payload's fields are snake_case like every other payload of the log.
    assert.deepEqual(record.response_payload.usage, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, prompt_tokens_details: { cached_tokens: 0 } });
    // gpt-4o-mini: 3 × 0.15 + 2 × 0.6 = 1.65 µ$ → 2 µ$.
    assert.equal(record.cost_usd, 0.000002);
  });

  /** Starts a stream that hangs after its first frame and reads that frame; `cancel` goes away and waits for the gateway to cancel upstream. */
  async function hangingStream(streamKey: string): Promise<{ requestId: string; cancel: () => Promise<void> }> {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((resolve) => (upstreamClosed = resolve));
    fake.scriptChat({ kind: 'stream-hang', deltas: ['partial'], onClose: () => upstreamClosed() });
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${streamKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'tell me a long story' }], stream: true }),
      signal: controller.signal,
    });
    await response.body!.getReader().read(); // the first frame arrived
    return {
      requestId: response.headers.get('x-request-id')!,
      async cancel() {
        controller.abort();
        await closed; // the gateway cancelled the upstream call
      },
    };
  }

  /** Starts a stream that hangs after its first frame, reads that frame, then goes away. */
  async function cancelledStream(): Promise<string> {
    const stream = await hangingStream(key);
    await stream.cancel();
    return stream.requestId;
  }

  test('a stream the client cancels is still logged (status 499, client_closed)', async () => {
    // Node runs a timer longer than it can wait after 1 ms (and warns): the wait for the
    // cancelled route, both upstream timeouts added, used to be one.
    const overflows: Error[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === 'TimeoutOverflowWarning') overflows.push(warning);
    };
    process.on('warning', onWarning);
    try {
      const record = await loggedRecord(gateway, await cancelledStream());
      assert.equal(record.status, 499);
      assert.equal(record.error_code, 'client_closed');
      assert.equal(record.streaming, true);
      // The provider answered in part and reported no usage: unknown (it was logged as $0).
      assert.equal(record.cost_usd, null);
      assert.deepEqual(overflows.map((warning) => warning.message), []);
    } finally {
      process.off('warning', onWarning);
    }
  });

  test(
    'a cancelled stream keeps what the route recorded after the cancellation (partial answer)',
    async () => {
      const record = await loggedRecord(gateway, await cancelledStream());
      assert.equal(record.response_payload.choices[0].content, 'partial');
    },
  );

  test('paging the list while a long stream ends: its record is on a later page or the next poll, never skipped', async () => {
    const pagingKey = await gateway.createKey({ projectId: 'research' });
    const pagingKeyId = (await gateway.admin('GET', '/admin/v1/keys')).body.data.at(-1).id;
    const chat = (content: string) => post(gateway, '/v1/chat/completions', { authorization: `Bearer ${pagingKey}` }, { model: 'gpt-4o', messages: [{ role: 'user', content }] });
    fake.scriptChat({ kind: 'reply', text: 'ok', usage: { promptTokens: 1, completionTokens: 1 } });
    const first = await chat('a');
    const second = await chat('b');
    // A stream starts after them and runs on.
    const stream = await hangingStream(pagingKey);
    const streamId = stream.requestId;
    fake.scriptChat({ kind: 'reply', text: 'ok', usage: { promptTokens: 1, completionTokens: 1 } });
    const third = await chat('c');
    await loggedRecord(gateway, third.requestId);

    const pageOne = (await gateway.admin('GET', `/admin/v1/logs?key=${pagingKeyId}&limit=2`)).body;
    assert.deepEqual(pageOne.data.map((entry: { request_id: string }) => entry.request_id), [third.requestId, second.requestId]);
    // The stream ends after page one was read.
    await stream.cancel();
    await loggedRecord(gateway, streamId);

    const later: string[] = [];
    for (let cursor = pageOne.next_cursor; cursor !== null; ) {
      const page = (await gateway.admin('GET', `/admin/v1/logs?key=${pagingKeyId}&limit=2&cursor=${cursor}`)).body;
      later.push(...page.data.map((entry: { request_id: string }) => entry.request_id));
      cursor = page.next_cursor;
    }
    // The next poll reads the first page again, down to the first record already seen.
    const polled = (await gateway.admin('GET', `/admin/v1/logs?key=${pagingKeyId}&limit=2`)).body.data.map((entry: { request_id: string }) => entry.request_id);
    const fresh = polled.slice(0, polled.indexOf(third.requestId));
    assert.deepEqual([...fresh, ...later], [streamId, first.requestId]);
  });

  test('a key sent where a model name or platform goes is not stored raw', async () => {
    // Swapped settings send a key as the model; the columns for the names callers write were
    // stored as sent, so the key showed in every list page and export.
    const { requestId, status } = await post(gateway, '/v1/chat/completions', { authorization: `Bearer ${key}`, 'x-platform-id': `batch ${LEAKED_VENDOR_KEY}` }, {
      model: key,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(status, 400);
    const record = await loggedRecord(gateway, requestId);
    assert.equal(record.requested_model, 'sk-mg-[redacted]');
    assert.equal(record.platform, 'batch [redacted]');
    const listed = await gateway.admin('GET', '/admin/v1/logs?limit=1000');
    assert.ok(!JSON.stringify(listed.body).includes(key.slice(6)) && !JSON.stringify(listed.body).includes(LEAKED_VENDOR_KEY));
  });

  test('authentication failures are logged with their error code, naming the key when it is ours', async () => {
    const missing = await post(gateway, '/v1/chat/completions', {}, { model: 'gpt-4o', messages: [] });
    const invalid = await post(gateway, '/v1/chat/completions', { authorization: 'Bearer sk-mg-notakeyatall0000000000000000000000' }, {});
    const pausedKey = await gateway.createKey();
    const pausedId = (await gateway.admin('GET', '/admin/v1/keys')).body.data.at(-1).id;
    await gateway.admin('POST', `/admin/v1/keys/${pausedId}/pause`);
    const paused = await post(gateway, '/v1/chat/completions', { 'x-api-key': pausedKey }, {});
    assert.deepEqual([missing.status, invalid.status, paused.status], [401, 401, 403]);

    const missingRecord = await loggedRecord(gateway, missing.requestId);
    assert.equal(missingRecord.error_code, 'missing_api_key');
    assert.equal(missingRecord.fingerprint, null);
    assert.match(missingRecord.detail.error_message, /No API key was sent/);
    const invalidRecord = await loggedRecord(gateway, invalid.requestId);
    assert.equal(invalidRecord.error_code, 'invalid_api_key');
    assert.equal(invalidRecord.key_id, null);
    assert.ok(!JSON.stringify(invalidRecord).includes('notakeyatall'));
    const pausedRecord = await loggedRecord(gateway, paused.requestId);
    assert.equal(pausedRecord.error_code, 'key_paused');
    assert.equal(pausedRecord.key_id, pausedId);
  });

  test('a flood of refused unauthenticated requests is one record per client address per interval, with its count', async () => {
    const refusedBefore = (await gateway.admin('GET', '/admin/v1/logs?status=401&limit=1000')).body.data.length;
    const flood = [];
    for (let index = 0; index < 40; index += 1) {
      flood.push(await post(gateway, '/v1/chat/completions', { authorization: `Bearer sk-mg-flood${String(index).padStart(30, '0')}` }, {}));
    }
    assert.ok(flood.every((result) => result.status === 401));
    gateway.gateway.context.logs.refusals.flush();
    await gateway.gateway.context.logs.writer.flush();
    const refused = (await gateway.admin('GET', '/admin/v1/logs?status=401&limit=1000')).body.data;
    // The first refusal of the interval has its own record (unless this address was refused
    // earlier in it); the others are one summary record, written from the last of them.
    assert.ok(refused.length - refusedBefore <= 2, `${refused.length - refusedBefore} records for 40 refusals`);
    const summary = await loggedRecord(gateway, flood.at(-1)!.requestId);
    const counted = summary.detail.unauthenticated_refusals;
    assert.ok(counted.refused_requests >= 39, JSON.stringify(counted));
    assert.equal(counted.client_address, '127.0.0.1');
    assert.ok(Date.parse(counted.first_at) <= Date.parse(counted.last_at));
    assert.equal(summary.error_code, 'invalid_api_key');
    assert.equal(summary.request_payload, null, 'a summary keeps no payload');
  });

  test("an upstream rejection of the service's credential: neutral 502 to the caller, upstream status only in the admin detail", async () => {
    fake.scriptChat({ kind: 'error', status: 401, message: 'Incorrect API key provided: sk-upstr***' });
    const result = await post(gateway, '/v1/chat/completions', { authorization: `Bearer ${key}` }, { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(result.status, 502);
    const record = await loggedRecord(gateway, result.requestId);
    assert.equal(record.error_code, 'provider_error');
    assert.equal(record.detail.upstreamStatus, 401);
    const list = await gateway.admin('GET', `/admin/v1/logs?status=502`);
    const summary = list.body.data.find((entry: { request_id: string }) => entry.request_id === result.requestId);
    assert.equal(summary.detail, undefined, 'list pages carry no detail');
  });

  test('generated image base64 is stored as a reference and the starting price is flagged', async () => {
    const client = clientFor(gateway, key);
    const { response } = await client.images.generate({ model: 'gpt-image-1', prompt: 'a red square', n: 2 }).withResponse();
    const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
    assert.equal(record.image_count, 2);
    // gpt-image-1 is listed "starts at" $0.011 per image.
    assert.equal(record.cost_usd, 0.022);
    assert.equal(record.cost_is_starting_price, true);
    const stored = JSON.stringify(record.response_payload);
    assert.ok(!stored.includes(FAKE_PNG_BASE64));
    assert.match(stored, /\[omitted image\/png: \d+ bytes, sha256 [0-9a-f]{64}\]|"b64_json"/);
  });

  test('list filters, cursor pages, export and usage; the admin token is required', async () => {
    const unauthorised = await fetch(`${gateway.url}/admin/v1/logs`);
    assert.equal(unauthorised.status, 401);
    const withModelKey = await fetch(`${gateway.url}/admin/v1/logs`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(withModelKey.status, 401);

    const byKey = await gateway.admin('GET', `/admin/v1/logs?key=${keyId}&limit=2`);
    assert.equal(byKey.status, 200);
    assert.equal(byKey.body.data.length, 2);
    assert.ok(byKey.body.data.every((entry: { key_id: string }) => entry.key_id === keyId));
    assert.equal(byKey.body.has_more, true);
    const next = await gateway.admin('GET', `/admin/v1/logs?key=${keyId}&limit=2&cursor=${byKey.body.next_cursor}`);
    assert.ok(next.body.data.every((entry: { request_id: string }) => !byKey.body.data.some((seen: { request_id: string }) => seen.request_id === entry.request_id)));

    const byModel = await gateway.admin('GET', '/admin/v1/logs?model=gpt-4o-mini&since=1h&status=success');
    assert.deepEqual(byModel.body.data.map((entry: { resolved_model: string }) => entry.resolved_model), ['gpt-4o-mini']);
    const other = await gateway.admin('GET', '/admin/v1/logs?project=nobody');
    assert.deepEqual(other.body.data, []);

    const exported = await fetch(`${gateway.url}/admin/v1/logs/export?format=jsonl&key=${keyId}`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get('content-type')!, /^application\/x-ndjson/);
    const lines = (await exported.text()).trim().split('\n').map((line) => JSON.parse(line));
    const all = await gateway.admin('GET', `/admin/v1/logs?key=${keyId}&limit=1000`);
    assert.equal(lines.length, all.body.data.length);
    assert.ok(lines.some((line) => line.request_payload !== null));
    assert.ok(!lines.some((line) => JSON.stringify(line).includes(LEAKED_VENDOR_KEY)));

    const usage = await gateway.admin('GET', `/admin/v1/usage?by=model&key=${keyId}`);
    const gpt4o = usage.body.data.find((entry: { model: string }) => entry.model === 'gpt-4o');
    assert.ok(gpt4o.requests >= 3);
    assert.equal(gpt4o.prompt_tokens, 5);
    const byDay = await gateway.admin('GET', '/admin/v1/usage?by=day&since=7d');
    assert.equal(byDay.body.data.at(-1).day, new Date().toISOString().slice(0, 10));
    const byKeyUsage = await gateway.admin('GET', '/admin/v1/usage?by=key');
    assert.ok(byKeyUsage.body.data.some((entry: { key_id: string }) => entry.key_id === keyId));
  });

  test('bad filter and export parameters are 400s that name the parameter', async () => {
    const cases: [string, string][] = [
      ['/admin/v1/logs?since=yesterday', 'since'],
      ['/admin/v1/logs?until=2025-13-45', 'until'],
      // Days the month does not have: they used to be read as days of the next month.
      ['/admin/v1/logs?since=2025-02-29', 'since'],
      ['/admin/v1/usage?until=2025-04-31T12:00:00Z', 'until'],
      ['/admin/v1/logs?since=2025-01-02&until=2025-01-01', 'until'],
      ['/admin/v1/logs?limit=0', 'limit'],
      ['/admin/v1/logs?limit=abc', 'limit'],
      ['/admin/v1/logs?cursor=not-a-cursor', 'cursor'],
      // Well-formed JSON, but no page ends there: PostgreSQL refused the values (a 400 naming
      // nothing), SQLite answered an empty page.
      [`/admin/v1/logs?cursor=${cursorOf([1e20, 'req_0'])}`, 'cursor'],
      [`/admin/v1/logs?cursor=${cursorOf([-1, 'req_0'])}`, 'cursor'],
      [`/admin/v1/logs?cursor=${cursorOf([1_700_000_000_000, 'req_\u0000'])}`, 'cursor'],
      [`/admin/v1/logs?cursor=${cursorOf([1_700_000_000_000, ''])}`, 'cursor'],
      ['/admin/v1/logs?status=teapot', 'status'],
      ['/admin/v1/logs?key=a%20b', 'key'],
      ['/admin/v1/logs/export?format=xml', 'format'],
      ['/admin/v1/usage?by=week', 'by'],
    ];
    for (const [path, param] of cases) {
      const response = await gateway.admin('GET', path);
      assert.equal(response.status, 400, path);
      assert.equal(response.body.error.code, 'invalid_body', path);
      assert.equal(response.body.error.param, param, path);
      assert.ok(response.body.error.message.startsWith(param), `${path}: ${response.body.error.message}`);
    }
    const unknown = await gateway.admin('GET', '/admin/v1/logs?colour=red');
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error.message, /colour/);
    const missing = await gateway.admin('GET', '/admin/v1/logs/req_doesnotexist');
    assert.equal(missing.status, 404);
  });
});

describe('payload retention off', () => {
  test('logs.payloads=false keeps metadata, usage and cost but no payloads', async () => {
    const fake = await startOpenAIFake();
    const gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: UPSTREAM_KEY, MODELGATE_LOG_PAYLOADS: 'false' },
    });
    try {
      const key = await gateway.createKey();
      const { response } = await clientFor(gateway, key).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'private' }] }).withResponse();
      const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
      assert.equal(record.request_payload, null);
      assert.equal(record.response_payload, null);
      assert.equal(record.usage.total_tokens, 9);
      assert.equal(record.cost_usd, 0.000053);
    } finally {
      await gateway.close();
      await fake.close();
    }
  });
});

describe('a request that calls several models', () => {
  test('is logged with the sum of its calls, each priced by its own model, and each call listed', async () => {
    const multiModelRun: RouteModule = (app) => {
      app.post('/test/multi-model-run', { config: { scope: 'agents:execute' }, schema: { hide: true } }, async (request) => {
        const { call } = request;
        call.describe({ mode: 'agent', payload: {} });
        await call.reserve(request.principal, { tokens: 0, costUsd: null });
        for (const [model, promptTokens, completionTokens] of [['gpt-4o', 1000, 100], ['gpt-4o-mini', 2000, 300]] as const) {
          const checked = call.subcall({ mode: 'chat', model, capability: 'chat', purpose: `node:${model}` });
          await checked.invoke(async () => ({ usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, cachedPromptTokens: null } }));
        }
        return { ok: true };
      });
    };
    const gateway = await startTestGateway({ routes: [...ROUTE_MODULES, multiModelRun] });
    try {
      const key = await gateway.createKey();
      const result = await post(gateway, '/test/multi-model-run', { authorization: `Bearer ${key}` }, {});
      assert.equal(result.status, 200);
      const record = await loggedRecord(gateway, result.requestId);
      // gpt-4o: 1000 × $2.50 + 100 × $10 per million; gpt-4o-mini: 2000 × $0.15 + 300 × $0.60 per million.
      assert.equal(record.cost_usd, 0.0025 + 0.001 + 0.0003 + 0.00018);
      assert.equal(record.usage.total_tokens, 3400);
      assert.equal(record.mode, 'agent');
      const calls = (record.detail as { calls: { model: string; purpose: string; cost_micro_usd?: number; costMicroUsd: number }[] }).calls;
      assert.deepEqual(
        calls.map((entry) => [entry.purpose, entry.model, entry.costMicroUsd]),
        [
          ['node:gpt-4o', 'gpt-4o', 3500],
          ['node:gpt-4o-mini', 'gpt-4o-mini', 480],
        ],
      );
    } finally {
      await gateway.close();
    }
  });
});

for (const backend of STORAGE_BACKENDS) {
  describe(`request log on ${backend.name}: what a caller or a provider sends never stops it`, { skip: backend.skip }, () => {
    let running: BackendGateway;
    let fake: OpenAIFake;
    let gateway: TestGateway;
    let key: string;

    before(async () => {
      running = await startBackendGateway(backend);
      ({ fake, gateway } = running);
      key = await gateway.createKey();
    });
    after(() => running.close());

    test('a model name with U+0000 is logged without it, and the requests after it are logged too', async () => {
      // PostgreSQL's text cannot hold U+0000: such a row used to fail its whole batch, retried for ever.
      const refused = await post(gateway, '/v1/chat/completions', { authorization: `Bearer ${key}` }, { model: 'gpt-4o\u0000x', messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(refused.status, 400);
      fake.scriptChat({ kind: 'reply', text: 'Hello.', usage: { promptTokens: 3, completionTokens: 2 } });
      const answered = await post(gateway, '/v1/chat/completions', { authorization: `Bearer ${key}` }, { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(answered.status, 200);
      assert.equal((await loggedRecord(gateway, refused.requestId)).requested_model, 'gpt-4o\uFFFDx');
      assert.equal((await loggedRecord(gateway, answered.requestId)).status, 200);
    });

    test('a request the client abandons while the provider thinks is logged 499, and the one before it on the connection 200', async () => {
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-platform-id': `abandon-${backend.name}` };
      const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] });
      fake.scriptChat({ kind: 'reply', text: 'Hello.', usage: { promptTokens: 3, completionTokens: 2 } });
      const answered = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers, body });
      await answered.text();
      fake.scriptChat({ kind: 'delay-headers', delayMs: 5_000 });
      const upstreamCalls = fake.server.requests.length;
      const controller = new AbortController();
      const abandoned = fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers, body, signal: controller.signal });
      while (fake.server.requests.length === upstreamCalls) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort();
      await assert.rejects(abandoned);
      let records: { status: number; error_code: string | null }[] = [];
      for (let attempt = 0; attempt < 200 && records.length < 2; attempt += 1) {
        await gateway.gateway.context.logs.writer.flush();
        const listed = await gateway.admin('GET', '/admin/v1/logs?limit=100');
        records = (listed.body.data as { platform: string; status: number; error_code: string | null }[]).filter((record) => record.platform === headers['x-platform-id']);
        if (records.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.deepEqual(
        records.map((record) => [record.status, record.error_code]).sort(),
        [[200, null], [499, 'client_closed']],
      );
    });

    test("a compatible server's fractional token counts are rounded: the request is priced and logged", async () => {
      fake.scriptChat({ kind: 'reply', text: 'Hello.', usage: { promptTokens: 4.6, completionTokens: 2.2 } });
      const answered = await post(gateway, '/v1/chat/completions', { authorization: `Bearer ${key}` }, { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(answered.status, 200);
      const record = await loggedRecord(gateway, answered.requestId);
      assert.deepEqual(record.usage, { prompt_tokens: 5, completion_tokens: 2, cached_tokens: 0, total_tokens: 7 });
      // gpt-4o: 5 × $2.50/M + 2 × $10/M = 32.5 µ$ → 33 µ$ (half-up).
      assert.equal(record.cost_usd, 0.000033);
    });

    test('a token count past what the columns hold is kept as not reported, and the record is written and priced', async () => {
      // PostgreSQL's integer columns end at 2^31 - 1: the row was refused and the record lost
      // (SQLite kept it: the same answer was logged on one database and not the other).
      fake.scriptChat({ kind: 'reply', text: 'Hello.', usage: { promptTokens: 3_000_000_000, completionTokens: 2 } });
      const answered = await post(gateway, '/v1/chat/completions', { authorization: `Bearer ${key}` }, { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(answered.status, 200);
      const record = await loggedRecord(gateway, answered.requestId);
      assert.deepEqual(record.usage, { prompt_tokens: null, completion_tokens: 2, cached_tokens: 0, total_tokens: null });
      // Priced from what the provider reported: 3e9 × $2.50/M + 2 × $10/M = $7,500.00002.
      assert.equal(record.cost_usd, 7500.00002);
    });
  });
}
