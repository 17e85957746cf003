import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { simpleGraph } from './helpers/agents.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * One input policy for every model call (src/calls): the same hostile message, sent to every
 * endpoint that takes messages, gets the same documented error from each, and the provider receives
 * nothing. Private addresses in image URLs are not among them: the gateway never fetches a
 * model's image URL (the provider does), so it does not judge where one points
 * (docs/decisions/0010-one-model-call-path.md).
 */

/** Parsed JSON bodies: read loosely, every field used is asserted. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/** A chat model that takes images, and one that takes text only (default catalog, OpenAI). */
const MODELS = { vision: 'gpt-4o-mini', text: 'o3-mini' } as const;
/** The published agent whose llm node uses each of them. */
const AGENTS = { vision: 'sees', text: 'reads' } as const;

interface HostileCase {
  name: string;
  part: Loose;
  model: keyof typeof MODELS;
  status: number;
  code: string;
}

const image = (url: string) => ({ type: 'image_url', image_url: { url } });
const MIB = 1024 * 1024;

const CASES: HostileCase[] = [
  { name: 'credentials in an image URL', part: image('https://user:password@images.example.com/cat.png'), model: 'vision', status: 400, code: 'invalid_image_url' },
  { name: 'a user name alone in an image URL', part: image('https://token@images.example.com/cat.png'), model: 'vision', status: 400, code: 'invalid_image_url' },
  { name: 'an ftp image URL', part: image('ftp://images.example.com/cat.png'), model: 'vision', status: 400, code: 'invalid_image_url' },
  { name: 'a file: image URL', part: image('file:///etc/passwd'), model: 'vision', status: 400, code: 'invalid_image_url' },
  { name: 'a javascript: image URL', part: image('javascript:alert(1)'), model: 'vision', status: 400, code: 'invalid_image_url' },
  { name: 'an image URL that is no URL', part: image('not a url'), model: 'vision', status: 400, code: 'invalid_image_url' },
  { name: 'a data URI that is not an image', part: image(`data:text/html;base64,${Buffer.from('<script>x</script>').toString('base64')}`), model: 'vision', status: 400, code: 'invalid_image_url' },
  { name: 'a data URI that is not base64', part: image('data:image/png,rawtext'), model: 'vision', status: 400, code: 'invalid_image_url' },
  { name: 'an image for a text-only model', part: image('https://images.example.com/cat.png'), model: 'text', status: 400, code: 'unsupported_input_modality' },
  { name: 'a file part with a remote file URL', part: { type: 'file', file: { file_url: 'https://files.example.com/a.pdf' } }, model: 'vision', status: 400, code: 'invalid_body' },
  { name: 'a file part whose data is a URL', part: { type: 'file', file: { filename: 'a.pdf', file_data: 'https://files.example.com/a.pdf' } }, model: 'vision', status: 400, code: 'invalid_body' },
  { name: 'a file part with a provider file id', part: { type: 'file', file: { file_id: 'file-abc123' } }, model: 'vision', status: 400, code: 'invalid_body' },
  {
    name: 'an image larger than any body limit',
    part: image(`data:image/png;base64,${Buffer.alloc(21 * MIB).toString('base64')}`),
    model: 'vision',
    status: 413,
    code: 'request_too_large',
  },
];

/** A chat content part as the Responses API writes it. */
function responsesPart(part: Loose): Loose {
  if (part.type === 'text') return { type: 'input_text', text: part.text };
  if (part.type === 'image_url') return { type: 'input_image', image_url: part.image_url.url };
  return { type: 'input_file', ...part.file };
}

/** Every endpoint that takes messages, as the request that carries `parts` as the user's turn. */
const ENDPOINTS: { name: string; path: (model: keyof typeof MODELS) => string; body: (parts: Loose[], model: keyof typeof MODELS) => Loose }[] = [
  { name: 'chat completions', path: () => '/v1/chat/completions', body: (parts, model) => ({ model: MODELS[model], messages: [{ role: 'user', content: parts }] }) },
  {
    name: 'chat completions, streamed',
    path: () => '/v1/chat/completions',
    body: (parts, model) => ({ model: MODELS[model], stream: true, messages: [{ role: 'user', content: parts }] }),
  },
  {
    name: 'responses',
    path: () => '/v1/responses',
    body: (parts, model) => ({ model: MODELS[model], input: [{ role: 'user', content: parts.map(responsesPart) }] }),
  },
  {
    name: 'responses, streamed',
    path: () => '/v1/responses',
    body: (parts, model) => ({ model: MODELS[model], stream: true, input: [{ role: 'user', content: parts.map(responsesPart) }] }),
  },
  { name: 'lightweight VETTING', path: () => '/v1/chat/vetting', body: (parts, model) => ({ model: MODELS[model], messages: [{ role: 'user', content: parts }] }) },
  {
    name: 'full VETTING',
    path: () => '/v1/vetting/full',
    body: (parts, model) => ({ mode: 'chat', config: { chatModel: { modelId: MODELS[model] } }, prompts: {}, messages: [{ role: 'user', content: parts }] }),
  },
  { name: 'an agent run', path: (model) => `/v1/agents/${AGENTS[model]}/runs`, body: (parts) => ({ input: [{ role: 'user', content: parts }] }) },
];

describe('one input policy on every endpoint that takes messages', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let key: string;

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789' } });
    for (const model of ['vision', 'text'] as const) {
      const saved = await gateway.admin('PUT', `/admin/v1/agents/${AGENTS[model]}`, { graph: simpleGraph({}, MODELS[model]) });
      assert.equal(saved.status, 200, JSON.stringify(saved.body));
      assert.equal((await gateway.admin('POST', `/admin/v1/agents/${AGENTS[model]}/publish`, {})).status, 200);
    }
    key = await gateway.createKey();
  });
  after(async () => {
    await gateway.close();
    await fake.close();
  });

  test('every endpoint answers a well-formed message: the hostile ones below are refused for what they carry', async () => {
    for (const endpoint of ENDPOINTS) {
      const response = await post(endpoint.path('vision'), endpoint.body([{ type: 'text', text: 'Hello' }], 'vision'));
      assert.equal(response.status, 200, `${endpoint.name}: ${response.text.slice(0, 300)}`);
    }
    assert.ok(fake.server.requests.length >= ENDPOINTS.length);
  });

  for (const hostile of CASES) {
    test(`${hostile.name}: ${hostile.status} ${hostile.code} from every endpoint, nothing sent to the provider`, async () => {
      fake.server.requests.length = 0;
      const answers: string[] = [];
      for (const endpoint of ENDPOINTS) {
        const response = await post(endpoint.path(hostile.model), endpoint.body([{ type: 'text', text: 'Look at this.' }, hostile.part], hostile.model));
        const error = (JSON.parse(response.text) as Loose).error;
        answers.push(`${endpoint.name}: ${response.status} ${error?.code ?? response.text.slice(0, 120)}`);
        if (error !== undefined) {
          assert.equal(error.request_id, response.requestId);
          assert.doesNotMatch(error.message, /user:password|token@/, 'the credential is not echoed');
        }
      }
      assert.deepEqual(
        answers,
        ENDPOINTS.map((endpoint) => `${endpoint.name}: ${hostile.status} ${hostile.code}`),
      );
      assert.deepEqual(
        fake.server.requests.map((request) => request.path),
        [],
        'the provider received nothing',
      );
    });
  }

  async function post(path: string, body: unknown): Promise<{ status: number; text: string; requestId: string }> {
    const response = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, text: await response.text(), requestId: response.headers.get('x-request-id')! };
  }
});
