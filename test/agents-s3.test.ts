import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ROUTE_MODULES } from '../src/server/routes/index.js';
import { newStorageKey } from '../src/agents/media/media-store.js';
import { S3MediaStore } from '../src/agents/media/s3-media-store.js';
import { sha256Hex, signS3Request } from '../src/agents/media/s3-signature.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { startFakeS3, type FakeS3 } from './fakes/s3.js';
import { PNG_1X1 } from './helpers/scripted-provider.js';

const ACCESS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const SECRET_KEY = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

test('Signature Version 4 matches the GET Object example of the S3 documentation', () => {
  const headers = signS3Request(
    { method: 'GET', url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'), headers: { range: 'bytes=0-9' }, payloadHash: sha256Hex(''), date: new Date('2013-05-24T00:00:00Z') },
    { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY, region: 'us-east-1' },
  );
  assert.equal(
    headers.authorization,
    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
  );
});

let s3: FakeS3;
let fake: OpenAIFake;
let gateway: TestGateway;

before(async () => {
  s3 = await startFakeS3('agent-media', ACCESS_KEY);
  fake = await startOpenAIFake();
  gateway = await startTestGateway({
    env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789' },
    configFile: { agents: { mediaStore: { kind: 's3', s3Endpoint: s3.server.url, s3Bucket: 'agent-media', s3Region: 'eu-west-1', s3AccessKeyId: ACCESS_KEY, s3SecretAccessKey: SECRET_KEY } } },
    routes: ROUTE_MODULES,
  });
});
after(async () => {
  await gateway.close();
  await Promise.all([s3.close(), fake.close()]);
});

test('the S3 store puts and gets objects byte-for-byte; a missing object is null', async () => {
  const store = new S3MediaStore({ endpoint: s3.server.url, bucket: 'agent-media', region: 'eu-west-1', accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY });
  const key = newStorageKey();
  await store.put(key, PNG_1X1);
  assert.deepEqual(s3.objects.get(`assets/${key}`), PNG_1X1);
  assert.deepEqual(await store.get(key), PNG_1X1);
  assert.equal(await store.get(newStorageKey()), null);
  await assert.rejects(store.get('../secret'), /32 hex characters/);
  const wrong = new S3MediaStore({ endpoint: s3.server.url, bucket: 'agent-media', region: 'eu-west-1', accessKeyId: 'AKIAOTHER', secretAccessKey: SECRET_KEY });
  await assert.rejects(wrong.put(newStorageKey(), PNG_1X1), /HTTP 403/);
});

test('with agents.mediaStore.kind s3 a run archives its image in the bucket and serves it back', async () => {
  const graph = {
    version: 1, name: 'Look', entry: 'input',
    nodes: [{ id: 'input', type: 'input', next: 'look' }, { id: 'look', type: 'llm', config: { model: 'gpt-4o-mini' }, next: 'out' }, { id: 'out', type: 'output', config: { text: '{{look.content}}' } }],
  };
  s3.objects.clear();
  assert.equal((await gateway.admin('PUT', '/admin/v1/agents/look', { graph })).status, 200);
  assert.equal((await gateway.admin('POST', '/admin/v1/agents/look/publish', {})).status, 200);
  const key = await gateway.createKey({ scopes: ['agents:execute'] });
  const response = await fetch(`${gateway.url}/v1/agents/look/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input: [{ type: 'input_image', image_url: `data:image/png;base64,${PNG_1X1.toString('base64')}` }] }),
  });
  const body = (await response.json()) as { input_assets: { url: string }[] };
  assert.equal(response.status, 200, JSON.stringify(body));
  assert.deepEqual([...s3.objects.values()], [PNG_1X1]);
  const served = await fetch(body.input_assets[0]!.url, { headers: { authorization: `Bearer ${key}` } });
  assert.deepEqual(Buffer.from(await served.arrayBuffer()), PNG_1X1);
});
