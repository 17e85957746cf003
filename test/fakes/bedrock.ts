import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { crc32 } from 'node:zlib';
import { holdResponse, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.js';
import type { ChatScript, ConformanceFake, ScriptedUsage, UpstreamChatView } from '../providers/conformance.js';

/*
 * A fake of the Amazon Bedrock runtime (Amazon Bedrock API Reference): Converse and
 * ConverseStream (`POST /model/{modelId}/converse`, `/converse-stream`), InvokeModel and
 * InvokeModelWithResponseStream (`/invoke`, `/invoke-with-response-stream`) for Claude's
 * Messages body and for Titan and Cohere embeddings. Like the real service it VERIFIES each
 * request's Signature Version 4 (the canonical request with each path segment encoded again,
 * the string to sign, the derived key; written here from AWS's published algorithm, not with
 * the gateway's signing library), answers `x-amzn-RequestId`, errors as `{"message"}` with
 * `x-amzn-ErrorType`, and streams in AWS's binary event-stream framing, encoded here byte by
 * byte (prelude, CRC32s, string headers), with the `p` padding member Bedrock adds.
 */

export const FAKE_AWS = { accessKeyId: 'AKIDFAKEBEDROCK0123', secretAccessKey: 'fake-bedrock-secret-key-0123456789', region: 'us-east-1' } as const;

const ERROR_TYPES: Record<number, string> = {
  400: 'ValidationException',
  401: 'UnrecognizedClientException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

/** RFC 3986 UriEncode as AWS's algorithm defines it: every byte but A-Z a-z 0-9 - _ . ~. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
}

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** Checks a request's SigV4 Authorization header; returns what is wrong, or null. */
export function signatureProblem(request: RecordedRequest, credentials: { accessKeyId: string; secretAccessKey: string; region: string; sessionToken?: string }): string | null {
  const authorization = String(request.headers.authorization ?? '');
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(authorization);
  if (match === null) return `no SigV4 Authorization header: ${authorization.slice(0, 40)}`;
  const [, keyId, day, region, service, signedHeaders, signature] = match as unknown as string[];
  if (keyId !== credentials.accessKeyId) return `unknown access key ${keyId}`;
  if (region !== credentials.region || service !== 'bedrock') return `credential scope ${region}/${service}`;
  const amzDate = String(request.headers['x-amz-date'] ?? '');
  if (!amzDate.startsWith(day!)) return 'x-amz-date does not match the scope';
  const names = signedHeaders!.split(';');
  if (!names.includes('host') || !names.includes('x-amz-date')) return 'host and x-amz-date must be signed';
  if (credentials.sessionToken !== undefined && (request.headers['x-amz-security-token'] !== credentials.sessionToken || !names.includes('x-amz-security-token'))) {
    return 'the session token is missing or not signed';
  }
  const [rawPath, rawQuery = ''] = request.path.split('?');
  // Services other than S3 encode each segment of the (already encoded) path once more.
  const canonicalUri = rawPath!.split('/').map(uriEncode).join('/');
  const canonicalHeaders = names.map((name) => `${name}:${String(request.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalRequest = ['POST', canonicalUri, rawQuery, canonicalHeaders, signedHeaders, sha256(request.rawBody)].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day!), region!), service!), 'aws4_request');
  return createHmac('sha256', key).update(stringToSign).digest('hex') === signature ? null : 'SignatureDoesNotMatch';
}

/** One message of AWS's event-stream framing, with string headers (type 7). */
export function eventStreamMessage(headers: Record<string, string>, payload: string): Buffer {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const nameBytes = Buffer.from(name);
      const valueBytes = Buffer.from(value);
      const head = Buffer.alloc(1 + nameBytes.length + 3);
      head.writeUInt8(nameBytes.length, 0);
      nameBytes.copy(head, 1);
      head.writeUInt8(7, 1 + nameBytes.length);
      head.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
      return Buffer.concat([head, valueBytes]);
    }),
  );
  const body = Buffer.from(payload);
  const total = 12 + headerBytes.length + body.length + 4;
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headerBytes.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const withoutCrc = Buffer.concat([prelude, headerBytes, body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(withoutCrc), 0);
  return Buffer.concat([withoutCrc, crc]);
}

/** An event of a Bedrock stream: its JSON payload padded with `p`, as Bedrock sends it. */
export function bedrockEvent(eventType: string, payload: Record<string, unknown>): Buffer {
  return eventStreamMessage({ ':event-type': eventType, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify({ ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ'.slice(0, 8) }));
}

export function bedrockException(exceptionType: string, message: string): Buffer {
  return eventStreamMessage({ ':exception-type': exceptionType, ':content-type': 'application/json', ':message-type': 'exception' }, JSON.stringify({ message }));
}

/** A Converse answer in Bedrock's own words: its content blocks, stop reason and usage (streamed block by block when asked). */
export interface ConverseAnswer {
  content: ({ text: string; pieces?: string[] } | { toolUse: { toolUseId: string; name: string; input: Record<string, unknown> } })[];
  stopReason: 'end_turn' | 'tool_use' | 'max_tokens' | 'content_filtered';
  usage: { inputTokens: number; outputTokens: number; cacheReadInputTokens: number };
}

export interface BedrockFake extends ConformanceFake {
  /** What InvokeModel answers for Claude (a Messages body) next. */
  replyMessages(message: Record<string, unknown>): void;
  /** What Converse answers next, until scripted again (instead of the conformance script). */
  answerConverse(answer: ConverseAnswer): void;
}

function writeConverseAnswer(response: ServerResponse, answer: ConverseAnswer): void {
  response.write(bedrockEvent('messageStart', { role: 'assistant' }));
  answer.content.forEach((block, contentBlockIndex) => {
    if ('text' in block) {
      for (const text of block.pieces ?? [block.text]) response.write(bedrockEvent('contentBlockDelta', { contentBlockIndex, delta: { text } }));
    } else {
      response.write(bedrockEvent('contentBlockStart', { contentBlockIndex, start: { toolUse: { toolUseId: block.toolUse.toolUseId, name: block.toolUse.name } } }));
      const input = JSON.stringify(block.toolUse.input);
      for (const piece of [input.slice(0, 5), input.slice(5)]) response.write(bedrockEvent('contentBlockDelta', { contentBlockIndex, delta: { toolUse: { input: piece } } }));
    }
    response.write(bedrockEvent('contentBlockStop', { contentBlockIndex }));
  });
  response.write(bedrockEvent('messageStop', { stopReason: answer.stopReason }));
  const usage = { ...answer.usage, totalTokens: answer.usage.inputTokens + answer.usage.cacheReadInputTokens + answer.usage.outputTokens, cacheWriteInputTokens: 0 };
  response.write(bedrockEvent('metadata', { usage, metrics: { latencyMs: 42 } }));
}

function usageOf(usage: ScriptedUsage) {
  return { inputTokens: usage.promptTokens, outputTokens: usage.completionTokens, totalTokens: usage.promptTokens + usage.completionTokens, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 };
}

function requestId(): string {
  const hex = randomBytes(16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': requestId(), ...headers });
  response.end(JSON.stringify(body));
}

function sendError(response: ServerResponse, status: number, message: string): void {
  const type = ERROR_TYPES[status] ?? 'InternalServerException';
  sendJson(response, status, { message }, { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
}

function startStream(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': requestId() });
}

function writeConverseDeltas(response: ServerResponse, deltas: readonly string[]): void {
  response.write(bedrockEvent('messageStart', { role: 'assistant' }));
  for (const text of deltas) response.write(bedrockEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text } }));
}

function writeConverseEnd(response: ServerResponse, usage: ScriptedUsage): void {
  response.write(bedrockEvent('contentBlockStop', { contentBlockIndex: 0 }));
  response.write(bedrockEvent('messageStop', { stopReason: 'end_turn' }));
  response.write(bedrockEvent('metadata', { usage: usageOf(usage), metrics: { latencyMs: 42 } }));
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- request bodies are read loosely; the tests assert what they read
type Loose = any;

/** The Converse request as the conformance suite views it. */
function chatView(request: RecordedRequest): UpstreamChatView {
  const body: Loose = request.json ?? {};
  const blocks: Loose[] = (body.messages ?? []).flatMap((message: Loose) => message.content ?? []);
  return {
    credential: signatureProblem(request, FAKE_AWS) === null ? FAKE_AWS.accessKeyId : undefined,
    text: [...(body.system ?? []).map((block: Loose) => block.text), ...blocks.filter((block) => typeof block.text === 'string').map((block) => block.text)].join('\n'),
    images: blocks.filter((block) => block.image !== undefined).map((block) => ({ mimeType: `image/${block.image.format}`, base64: block.image.source.bytes })),
    imageUrls: [],
    files: blocks.filter((block) => block.document !== undefined).map((block) => ({ mimeType: block.document.format === 'pdf' ? 'application/pdf' : block.document.format, base64: block.document.source.bytes })),
    streamed: request.path.includes('/converse-stream'),
  };
}

/** A stable vector of a text, as an embedding model's answer. */
function vectorOf(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  return [...digest.subarray(0, 8)].map((byte) => byte / 255 - 0.5);
}

export async function startFakeBedrock(credentials: { accessKeyId: string; secretAccessKey: string; region: string; sessionToken?: string } = FAKE_AWS): Promise<BedrockFake> {
  const server: FakeServer = await startFakeServer();
  let script: ChatScript = { kind: 'reply', text: 'Hello.', usage: { promptTokens: 1, completionTokens: 1 } };
  let messagesReply: Record<string, unknown> | undefined;
  let converseAnswer: ConverseAnswer | undefined;

  /** A request the real service would refuse before reading it. */
  const refused = (request: RecordedRequest, response: ServerResponse): boolean => {
    const problem = signatureProblem(request, credentials);
    if (problem === null) return false;
    response.writeHead(403, { 'content-type': 'application/json', 'x-amzn-requestid': requestId(), 'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/' });
    response.end(JSON.stringify({ message: `The request signature we calculated does not match the signature you provided. (${problem})` }));
    return true;
  };

  const converse = async (request: RecordedRequest, response: ServerResponse, streamed: boolean) => {
    if (refused(request, response)) return;
    const body: Loose = request.json;
    if (!Array.isArray(body?.messages) || body.messages[0]?.role !== 'user' || body.model !== undefined) {
      return sendError(response, 400, 'A conversation must start with a user message. Try again with a conversation that starts with a user message.');
    }
    if (converseAnswer !== undefined) {
      const answer = converseAnswer;
      if (!streamed) {
        const content = answer.content.map((block) => ('text' in block ? { text: block.text } : { toolUse: block.toolUse }));
        const usage = { ...answer.usage, totalTokens: answer.usage.inputTokens + answer.usage.cacheReadInputTokens + answer.usage.outputTokens, cacheWriteInputTokens: 0 };
        return sendJson(response, 200, { output: { message: { role: 'assistant', content } }, stopReason: answer.stopReason, usage, metrics: { latencyMs: 42 } });
      }
      startStream(response);
      writeConverseAnswer(response, answer);
      response.end();
      return;
    }
    const current = script;
    switch (current.kind) {
      case 'error':
        return sendError(response, current.status, current.message);
      case 'delay-headers':
        await holdResponse(response, current.delayMs);
        return;
      case 'reply':
      case 'stream': {
        const text = current.kind === 'reply' ? current.text : current.deltas.join('');
        if (!streamed) {
          return sendJson(response, 200, {
            output: { message: { role: 'assistant', content: [{ text }] } },
            stopReason: 'end_turn',
            usage: usageOf(current.usage),
            metrics: { latencyMs: 42 },
          });
        }
        startStream(response);
        writeConverseDeltas(response, current.kind === 'reply' ? [current.text] : current.deltas);
        writeConverseEnd(response, current.usage);
        response.end();
        return;
      }
      case 'stream-truncated':
        startStream(response);
        writeConverseDeltas(response, current.deltas);
        response.end();
        return;
      case 'stream-error-event':
        startStream(response);
        writeConverseDeltas(response, current.deltas);
        response.end(bedrockException('modelStreamErrorException', current.message));
        return;
      case 'stream-hang':
        startStream(response);
        writeConverseDeltas(response, current.deltas);
        response.on('close', current.onClose);
        return;
    }
  };

  const invoke = (request: RecordedRequest, response: ServerResponse, streamed: boolean) => {
    if (refused(request, response)) return;
    const model = decodeURIComponent(request.path.split('/')[2] ?? '');
    const body: Loose = request.json ?? {};
    if (model.startsWith('amazon.titan-embed')) {
      if (typeof body.inputText !== 'string') return sendError(response, 400, 'Malformed input request: #: required key [inputText] not found');
      return sendJson(response, 200, { embedding: vectorOf(body.inputText), inputTextTokenCount: body.inputText.split(/\s+/).length });
    }
    if (model.startsWith('cohere.embed')) {
      if (!Array.isArray(body.texts) || typeof body.input_type !== 'string') return sendError(response, 400, 'Malformed input request: texts and input_type are required');
      return sendJson(response, 200, { id: requestId(), texts: body.texts, embeddings: body.texts.map(vectorOf), response_type: 'embeddings_floats' }, { 'x-amzn-bedrock-input-token-count': String(body.texts.length * 2) });
    }
    if (body.anthropic_version !== 'bedrock-2023-05-31' || body.model !== undefined || body.stream !== undefined) {
      return sendError(response, 400, 'Malformed input request: anthropic_version is required; model and stream are not permitted');
    }
    const message = messagesReply ?? {
      id: `msg_bdrk_${randomBytes(6).toString('hex')}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: [{ type: 'text', text: 'Hello from Claude on Bedrock.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 6 },
    };
    if (!streamed) return sendJson(response, 200, message);
    startStream(response);
    const events: Record<string, unknown>[] = [
      { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { input_tokens: (message.usage as Loose).input_tokens, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      ...(message.content as Loose[]).map((block) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: block.text } })),
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: (message.usage as Loose).output_tokens } },
      { type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 12, outputTokenCount: 6, invocationLatency: 40, firstByteLatency: 10 } },
    ];
    for (const event of events) response.write(bedrockEvent('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64') }));
    response.end();
  };

  server.on('POST /model/*', async (request, response) => {
    const path = request.path.split('?')[0]!;
    if (path.endsWith('/converse')) return converse(request, response, false);
    if (path.endsWith('/converse-stream')) return converse(request, response, true);
    if (path.endsWith('/invoke')) return invoke(request, response, false);
    if (path.endsWith('/invoke-with-response-stream')) return invoke(request, response, true);
    return sendError(response, 404, 'Unknown operation');
  });

  return {
    server,
    scriptChat(next) {
      script = next;
      converseAnswer = undefined;
    },
    answerConverse(answer) {
      converseAnswer = answer;
    },
    replyMessages(message) {
      messagesReply = message;
    },
    chatRequests: () => server.requests.filter((request) => /\/converse(-stream)?$/.test(request.path)).map(chatView),
    close: () => server.close(),
  };
}
