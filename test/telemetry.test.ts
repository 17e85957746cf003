import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startTestMcpServer } from './helpers/mcp-servers.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { FAKE_ANTHROPIC_KEY, startAnthropicConformanceFake } from './fakes/anthropic.js';
import type { ConformanceFake } from './providers/conformance.js';

/** One span as OTLP/HTTP JSON carries it (ids in hex, attributes as typed values). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number; doubleValue?: number } }[];
  status?: { code?: number };
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;

/** A real OTLP/HTTP receiver: what the exporter posts to /v1/traces, decoded from its JSON encoding. */
async function startOtlpReceiver(): Promise<{ url: string; spans: OtlpSpan[]; contentTypes: string[]; close: () => Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url !== '/v1/traces') return void response.writeHead(404).end();
      contentTypes.push(String(request.headers['content-type']));
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: { resource: unknown; scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const resource of body.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: async () => {
      server.close();
      await once(server, 'close');
    },
  };
}

function attribute(span: OtlpSpan, key: string): string | number | undefined {
  const value = span.attributes.find((entry) => entry.key === key)?.value;
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.doubleValue;
}

const CLIENT_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN_ID = '00f067aa0ba902b7';
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE_ID}-${CLIENT_SPAN_ID}-01`;

async function withGateway(env: Record<string, string>, run: (gateway: TestGateway, openai: OpenAI) => Promise<void>): Promise<void> {
  const gateway = await startTestGateway({ env });
  try {
    const secret = await gateway.createKey();
    await run(gateway, new OpenAI({ apiKey: secret, baseURL: `${gateway.url}/v1`, maxRetries: 0, defaultHeaders: { traceparent: CLIENT_TRACEPARENT } }));
  } finally {
    await gateway.close();
  }
}

describe('OpenTelemetry traces', () => {
  test('a request span under the client\'s traceparent, an attempt span under it, its traceparent sent upstream, with GenAI attributes', async () => {
    const receiver = await startOtlpReceiver();
    const openaiFake: OpenAIFake = await startOpenAIFake();
    const anthropicFake: ConformanceFake = await startAnthropicConformanceFake();
    try {
      await withGateway(
        { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'gateway-under-test', OPENAI_BASE_URL: `${openaiFake.server.url}/v1`, ANTHROPIC_BASE_URL: anthropicFake.server.url, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY },
        async (gateway, openai) => {
          openaiFake.scriptChat({ kind: 'reply', text: 'Hello.', usage: { promptTokens: 11, completionTokens: 7 } });
          const reply = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
          assert.equal(reply.choices[0]?.message.content, 'Hello.');

          openaiFake.scriptChat({ kind: 'stream', deltas: ['Str', 'eam'], usage: { promptTokens: 3, completionTokens: 2 } });
          const stream = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
          for await (const chunk of stream) void chunk;

          anthropicFake.scriptChat({ kind: 'reply', text: 'Hi from Claude.', usage: { promptTokens: 9, completionTokens: 5 } });
          await openai.chat.completions.create({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'Hi' }] });

          openaiFake.scriptChat({ kind: 'error', status: 500, message: 'The server had an error.' });
          await assert.rejects(openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }), { status: 502 });
          assert.equal(gateway.gateway.context.tracing !== undefined, true);
        },
      );
      // The gateway's shutdown exported what was still batched.
      assert.ok(receiver.contentTypes.every((type) => type.startsWith('application/json')), receiver.contentTypes.join());
      const servers = receiver.spans.filter((span) => span.kind === SPAN_KIND_SERVER);
      const clients = receiver.spans.filter((span) => span.kind === SPAN_KIND_CLIENT);
      assert.equal(servers.length, 4, receiver.spans.map((span) => span.name).join('\n'));
      assert.equal(clients.length, 4);
      const upstreamRequests = [...openaiFake.server.requests, ...anthropicFake.server.requests];
      for (const server of servers) {
        assert.equal(server.traceId, CLIENT_TRACE_ID, 'the request joins the client\'s trace');
        assert.equal(server.parentSpanId, CLIENT_SPAN_ID);
        assert.equal(server.name, 'POST /v1/chat/completions');
        const attempt = clients.find((span) => span.parentSpanId === server.spanId);
        assert.ok(attempt !== undefined, 'every request has its attempt span as a child');
        assert.equal(attempt.traceId, CLIENT_TRACE_ID);
        const sent = upstreamRequests.filter((request) => request.headers.traceparent === `00-${CLIENT_TRACE_ID}-${attempt.spanId}-01`);
        assert.equal(sent.length, 1, 'the provider got the attempt\'s traceparent');
        assert.equal(attribute(attempt, 'modelgate.attempt'), 1);
        assert.equal(attribute(attempt, 'modelgate.request_id'), attribute(server, 'modelgate.request_id'));
      }

      const [chat, streamed, claude, failed] = servers.sort((a, b) => String(attribute(a, 'modelgate.request_id')).localeCompare(String(attribute(b, 'modelgate.request_id'))));
      const attemptOf = (server: OtlpSpan) => clients.find((span) => span.parentSpanId === server.spanId)!;
      assert.equal(attribute(chat!, 'gen_ai.operation.name'), 'chat');
      assert.equal(attribute(chat!, 'gen_ai.request.model'), 'gpt-4o-mini');
      assert.equal(attribute(chat!, 'gen_ai.response.model'), 'gpt-4o-mini');
      assert.equal(attribute(chat!, 'gen_ai.provider.name'), 'openai');
      assert.equal(attribute(chat!, 'gen_ai.usage.input_tokens'), 11);
      assert.equal(attribute(chat!, 'gen_ai.usage.output_tokens'), 7);
      assert.equal(attribute(chat!, 'http.response.status_code'), 200);
      assert.ok(Number(attribute(chat!, 'modelgate.cost_usd')) > 0);
      assert.equal(attemptOf(chat!).name, 'chat gpt-4o-mini');
      assert.equal(attribute(attemptOf(chat!), 'gen_ai.usage.input_tokens'), 11, 'the attempt that served carries the tokens');
      assert.equal(attribute(attemptOf(chat!), 'http.response.status_code'), 200);
      assert.equal(attribute(attemptOf(chat!), 'server.address'), '127.0.0.1');

      assert.equal(attribute(streamed!, 'gen_ai.usage.output_tokens'), 2);
      assert.equal(attribute(attemptOf(streamed!), 'gen_ai.usage.output_tokens'), 2);
      assert.equal(attribute(claude!, 'gen_ai.provider.name'), 'anthropic');
      assert.equal(attribute(attemptOf(claude!), 'gen_ai.usage.input_tokens'), 9);

      assert.equal(attribute(failed!, 'http.response.status_code'), 502);
      assert.equal(attribute(failed!, 'error.type'), 'provider_error');
      assert.equal(failed!.status?.code, STATUS_ERROR);
      assert.equal(attribute(attemptOf(failed!), 'http.response.status_code'), 500);
      assert.equal(attribute(attemptOf(failed!), 'error.type'), '500');
      assert.equal(attemptOf(failed!).status?.code, STATUS_ERROR);
    } finally {
      await Promise.all([receiver.close(), openaiFake.close(), anthropicFake.close()]);
    }
  });

  /**
   * A public format's request through a gateway that exports traces, the client's traceparent
   * sent: the request span named after its route, the GenAI attributes, the provider call its
   * child with the traceparent passed on.
   */
  async function assertFormatTraced(
    fake: { server: ConformanceFake['server']; close(): Promise<void> },
    setup: { env: Record<string, string>; path: string; provider: string },
    call: (gatewayUrl: string, key: string) => Promise<unknown>,
  ): Promise<void> {
    const receiver = await startOtlpReceiver();
    try {
      const gateway = await startTestGateway({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...setup.env } });
      try {
        await call(gateway.url, await gateway.createKey());
      } finally {
        await gateway.close();
      }
      const request = receiver.spans.find((span) => span.kind === SPAN_KIND_SERVER);
      const attempt = receiver.spans.find((span) => span.kind === SPAN_KIND_CLIENT);
      assert.ok(request !== undefined && attempt !== undefined, receiver.spans.map((span) => span.name).join());
      assert.equal(request.name, `POST ${setup.path}`);
      assert.equal(request.parentSpanId, CLIENT_SPAN_ID);
      assert.equal(attribute(request, 'gen_ai.operation.name'), 'chat');
      assert.equal(attribute(request, 'gen_ai.provider.name'), setup.provider);
      assert.equal(attribute(request, 'gen_ai.usage.output_tokens'), 3);
      assert.equal(attempt.parentSpanId, request.spanId);
      assert.equal(fake.server.requests.at(-1)?.headers.traceparent, `00-${CLIENT_TRACE_ID}-${attempt.spanId}-01`);
    } finally {
      await Promise.all([receiver.close(), fake.close()]);
    }
  }

  test('the Messages API is traced the same way: its route, the GenAI attributes, the traceparent to the provider', async () => {
    const anthropicFake = await startAnthropicConformanceFake();
    anthropicFake.scriptChat({ kind: 'reply', text: 'Hello.', usage: { promptTokens: 6, completionTokens: 3 } });
    const setup = { env: { ANTHROPIC_BASE_URL: anthropicFake.server.url, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY }, path: '/v1/messages', provider: 'anthropic' };
    await assertFormatTraced(anthropicFake, setup, async (url, key) => {
      const client = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0, defaultHeaders: { traceparent: CLIENT_TRACEPARENT } });
      await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'Hi' }] });
    });
  });

  test("the Responses API is traced the same way, a stream passed through to OpenAI's own Responses API included", async () => {
    const openaiFake = await startOpenAIFake();
    openaiFake.scriptResponses({ kind: 'text', deltas: ['Hel', 'lo.'], usage: { promptTokens: 6, completionTokens: 3 } });
    const setup = { env: { OPENAI_BASE_URL: `${openaiFake.server.url}/v1`, OPENAI_API_KEY: 'sk-test-fake-openai-0123456789' }, path: '/v1/responses', provider: 'openai' };
    await assertFormatTraced(openaiFake, setup, async (url, key) => {
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: { traceparent: CLIENT_TRACEPARENT } });
      await client.responses.stream({ model: 'gpt-4o-mini', input: 'Hi', store: false }).finalResponse();
    });
    assert.equal(openaiFake.server.requests.at(-1)?.path, '/v1/responses');
  });

  test('a provider that cannot be reached: the attempt span has no status, and says why', async () => {
    const receiver = await startOtlpReceiver();
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as { port: number };
    closed.close();
    await once(closed, 'close');
    try {
      await withGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` }, async (_gateway, openai) => {
        await assert.rejects(openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }), { status: 502 });
      });
      const attempt = receiver.spans.find((span) => span.kind === SPAN_KIND_CLIENT);
      const request = receiver.spans.find((span) => span.kind === SPAN_KIND_SERVER);
      assert.ok(attempt !== undefined && request !== undefined);
      assert.equal(attempt.parentSpanId, request.spanId);
      assert.equal(attribute(attempt, 'http.response.status_code'), undefined);
      assert.equal(attribute(attempt, 'error.type'), 'ECONNREFUSED');
      assert.equal(attempt.status?.code, STATUS_ERROR);
      assert.equal(attribute(request, 'http.response.status_code'), 502);
    } finally {
      await receiver.close();
    }
  });

  test('without a collector nothing is traced: no tracing service, and no traceparent goes upstream', async () => {
    const openaiFake = await startOpenAIFake();
    try {
      await withGateway({ OPENAI_BASE_URL: `${openaiFake.server.url}/v1` }, async (gateway, openai) => {
        assert.equal(gateway.gateway.context.tracing, undefined);
        await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
      });
      assert.equal(openaiFake.server.requests.length, 1);
      assert.equal(openaiFake.server.requests[0]!.headers.traceparent, undefined);
    } finally {
      await openaiFake.close();
    }
  });

  test('an MCP tool call is a span under the client\'s traceparent, named by its tool', async () => {
    const receiver = await startOtlpReceiver();
    const tools = await startTestMcpServer({ tools: ['echo'] });
    try {
      const gateway = await startTestGateway({
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
        configFile: { mcp: { allowAddresses: ['127.0.0.1'], servers: [{ name: 'files', url: tools.url }] } },
      });
      try {
        const client = new Client({ name: 'traced', version: '1.0.0' });
        const secret = await gateway.createKey({ scopes: ['mcp:use'] });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}`, traceparent: CLIENT_TRACEPARENT } } }));
        await client.callTool({ name: 'files__echo', arguments: { text: 'traced' } });
        await client.close();
      } finally {
        await gateway.close();
      }
      const span = receiver.spans.find((candidate) => attribute(candidate, 'gen_ai.tool.name') === 'files__echo');
      assert.ok(span !== undefined, 'the tool call was exported');
      assert.equal(span.traceId, CLIENT_TRACE_ID);
      assert.equal(span.parentSpanId, CLIENT_SPAN_ID);
      assert.equal(attribute(span, 'gen_ai.operation.name'), 'execute_tool');
      assert.equal(attribute(span, 'gen_ai.provider.name'), 'files');
      assert.equal(attribute(span, 'http.response.status_code'), 200);
    } finally {
      await tools.stop();
      await receiver.close();
    }
  });
});
