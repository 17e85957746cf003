import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { simpleGraph } from './helpers/agents.js';
import { startBackendGateway, STORAGE_BACKENDS, type BackendGateway } from './helpers/storage-backends.js';

/**
 * Every field of a valid body of every write route, replaced in turn by values a caller may
 * send by mistake or on purpose: never a 5xx. Run on both databases, because PostgreSQL
 * refuses values SQLite stores (U+0000 in text, numbers beyond a column's range), and those
 * were 500s there.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

const HOSTILE: readonly Json[] = [
  'a\u0000b',
  '\ud800',
  1e308,
  -1e308,
  2 ** 31,
  2 ** 53 + 2,
  -1,
  0,
  1.5,
  true,
  null,
  [],
  {},
  'x'.repeat(100_000),
  [[[[[[]]]]]],
  { constructor: 'x' },
];

/** Each field's path, with each hostile value and with the field left out (undefined). */
function* mutations(value: Json, path: Path = []): Generator<[Path, Json | undefined]> {
  yield [path, undefined];
  for (const hostile of HOSTILE) yield [path, hostile];
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) yield* mutations(value[index]!, [...path, index]);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, member] of Object.entries(value)) yield* mutations(member, [...path, key]);
  }
}

function withValue(body: Json, path: Path, value: Json | undefined): Json | undefined {
  if (path.length === 0) return value;
  const copy = structuredClone(body) as Record<string | number, Json>;
  let parent = copy;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, Json>;
  const last = path[path.length - 1]!;
  if (value === undefined) delete parent[last];
  else parent[last] = value;
  return copy;
}

const GRAPH = simpleGraph({ name: 'Hostile', variables: { tone: 'calm' } }, 'gpt-4o-mini') as Json;

for (const backend of STORAGE_BACKENDS) {
  describe(`hostile values in every write route on ${backend.name}`, { skip: backend.skip }, () => {
    let running: BackendGateway;
    let gateway: TestGateway;

    before(async () => {
      running = await startBackendGateway(backend);
      gateway = running.gateway;
    });
    after(() => running.close());

    test('no field of any body, whatever its value, gets a 5xx', async () => {
      const key = await gateway.createKey();
      const keyId = (await gateway.admin('GET', '/admin/v1/keys')).body.data[0].id as string;
      assert.equal((await gateway.admin('PUT', '/admin/v1/agents/hostile', { graph: GRAPH })).status, 200);
      assert.equal((await gateway.admin('POST', '/admin/v1/agents/hostile/publish', {})).status, 200);
      const routes: [method: string, path: string, body: Json, token: string][] = [
        ['POST', '/admin/v1/keys', { name: 'n', project: 'p1', scopes: ['model:request'], limits: { rpm: 5, daily_tokens: 100, monthly_cost_usd: 3 }, allowed_models: ['gpt-4o'] }, TEST_ADMIN_TOKEN],
        ['PATCH', `/admin/v1/keys/${keyId}`, { name: 'n2', limits: { rpm: 6 }, allowed_models: ['gpt-4o-mini'] }, TEST_ADMIN_TOKEN],
        ['POST', '/admin/v1/projects', { id: 'pq', name: 'PQ' }, TEST_ADMIN_TOKEN],
        ['PUT', '/admin/v1/agents/hostile-2', { graph: GRAPH, project: 'default' }, TEST_ADMIN_TOKEN],
        ['POST', '/admin/v1/agents/validate', { graph: GRAPH }, TEST_ADMIN_TOKEN],
        ['POST', '/admin/v1/agents/hostile/test', { key, input: 'Hi' }, TEST_ADMIN_TOKEN],
        ['POST', '/admin/v1/agents/hostile/publish', { draft_version: 1 }, TEST_ADMIN_TOKEN],
        ['POST', '/admin/v1/agents/hostile/grants', { key_id: keyId }, TEST_ADMIN_TOKEN],
        ['POST', '/v1/agents/hostile/runs', { input: 'Hi', variables: { tone: 'warm' } }, key],
        ['POST', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5, temperature: 1, n: 1 }, key],
        [
          'POST',
          '/v1/chat/completions',
          { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }] },
          key,
        ],
        ['POST', '/v1/embeddings', { model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 8 }, key],
        ['POST', '/v1/images/generations', { model: 'gpt-image-1', prompt: 'A cat', n: 1, size: '1024x1024' }, key],
        ['POST', '/v1/audio/speech', { model: 'gpt-4o-mini-tts', input: 'Hi', voice: 'alloy' }, key],
        ['POST', '/v1/utils/encrypt', { text: 'x' }, key],
        ['POST', '/v1/utils/decrypt', { encryptedText: 'enc::v1.abc.def' }, key],
        ['POST', '/v1/chat/vetting', { messages: [{ role: 'user', content: 'Hi' }] }, key],
        ['POST', '/v1/vetting/full', { messages: [{ role: 'user', content: 'Hi' }], config: { chatModel: { modelId: 'gpt-4o-mini' } } }, key],
      ];
      const failures: string[] = [];
      /** Requests made with a key, each of which must end as one request-log row. */
      const keyed = new Map<string, string>();
      let sent = 0;
      const check = (response: Response, text: string, what: string) => {
        sent += 1;
        if (response.status >= 500) failures.push(`${response.status} ${what}: ${text.slice(0, 160)}`);
      };
      for (const [method, path, body, token] of routes) {
        for (const [field, value] of mutations(body)) {
          const sentBody = withValue(body, field, value);
          const response = await fetch(`${gateway.url}${path}`, {
            method,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            ...(sentBody === undefined ? {} : { body: JSON.stringify(sentBody) }),
          });
          const what = `${method} ${path} ${JSON.stringify(field)} = ${JSON.stringify(value)?.slice(0, 40)}`;
          check(response, await response.text(), what);
          if (token === key) keyed.set(response.headers.get('x-request-id')!, what);
        }
      }
      // The multipart route, with a key of its own (the loop above narrowed the first one's
      // models): its durations are strings a caller writes.
      const audioKey = await gateway.createKey();
      const durations = [['duration_seconds', '1e308'], ['duration_minutes', '1e307'], ['duration_seconds', '1e300'], ['duration_seconds', '-0'], ['duration_seconds', 'Infinity'], ['duration_seconds', '0x10'], ['duration_minutes', ''], ['duration_seconds', '9'.repeat(400)]] as const;
      for (const [field, value] of durations) {
        const form = new FormData();
        form.append('model', 'whisper-1');
        form.append(field, value);
        form.append('file', new Blob([Buffer.alloc(64)], { type: 'audio/wav' }), 'a.wav');
        const response = await fetch(`${gateway.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${audioKey}` }, body: form });
        const what = `POST /v1/audio/transcriptions ${field} = ${value.slice(0, 40)}`;
        check(response, await response.text(), what);
        assert.notEqual(response.status, 403, `${what}: the key may use whisper-1`);
        keyed.set(response.headers.get('x-request-id')!, what);
      }
      assert.ok(sent > 2000, `only ${sent} requests`);
      assert.deepEqual(failures, []);
      // Whatever it was sent, every keyed request is in the request log: a value that broke the
      // record (a cost of Infinity) once left a request answered and never logged.
      await gateway.gateway.context.logs.writer.flush();
      const unlogged: string[] = [];
      for (const [requestId, what] of keyed) {
        if ((await gateway.gateway.context.logs.store.get(requestId, { projectId: null })) === undefined) unlogged.push(what);
      }
      assert.deepEqual(unlogged, []);
    });
  });
}
