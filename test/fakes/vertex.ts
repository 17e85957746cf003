import { createPublicKey, createVerify, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forwardTo, startFakeServer, type RecordedRequest } from './fake-server.js';
import { FAKE_GEMINI_KEY } from './gemini.js';
import { startGeminiConformanceFake } from './gemini-conformance.js';
import { FAKE_ANTHROPIC_KEY, startAnthropicConformanceFake } from './anthropic.js';
import type { ConformanceFake, UpstreamChatView } from '../providers/conformance.js';

/*
 * A fake Vertex AI, as Google's references give it: the OAuth token endpoint of a service
 * account (the JWT bearer grant: the fake checks the assertion's RS256 signature with the
 * key's public half, its issuer, scope, audience and expiry), and the publisher-model URLs
 * `/v1/projects/{project}/locations/{location}/publishers/{google|anthropic}/models/{model}:{method}`
 * with `Authorization: Bearer <token>`. Gemini methods are answered by the Gemini fake behind
 * it (Vertex's bodies are the Gemini API's), Claude's `rawPredict` / `streamRawPredict` by the
 * Anthropic fake once the fake checked `anthropic_version: vertex-2023-10-16` and that no
 * `model` is in the body; `predict` of embedding models by itself.
 */

export const VERTEX_PROJECT = 'fake-project-0123';
export const VERTEX_LOCATION = 'us-east5';
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

export interface ServiceAccountFile {
  path: string;
  clientEmail: string;
  publicKey: KeyObject;
}

/** A service account key file with a fresh RSA key, as the Cloud console downloads it. */
export function writeServiceAccountFile(): ServiceAccountFile {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clientEmail = 'modelgate@fake-project-0123.iam.gserviceaccount.com';
  const path = join(mkdtempSync(join(tmpdir(), 'modelgate-vertex-')), 'service-account.json');
  writeFileSync(
    path,
    JSON.stringify({
      type: 'service_account',
      project_id: VERTEX_PROJECT,
      private_key_id: 'fake-key-id',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      client_email: clientEmail,
      client_id: '1234567890',
      token_uri: GOOGLE_TOKEN_URL,
    }),
  );
  return { path, clientEmail, publicKey: createPublicKey(publicKey.export({ type: 'spki', format: 'pem' })) };
}

/** What is wrong with a JWT bearer assertion, or null. */
function assertionProblem(assertion: string, account: ServiceAccountFile): string | null {
  const [header, claims, signature] = assertion.split('.');
  if (header === undefined || claims === undefined || signature === undefined) return 'not a JWT';
  const verifier = createVerify('RSA-SHA256');
  verifier.update(`${header}.${claims}`);
  if (!verifier.verify(account.publicKey, Buffer.from(signature, 'base64url'))) return 'invalid signature';
  const body = JSON.parse(Buffer.from(claims, 'base64url').toString()) as { iss?: string; scope?: string; aud?: string; exp?: number };
  if (body.iss !== account.clientEmail) return 'wrong issuer';
  if (body.scope !== SCOPE) return 'wrong scope';
  if (body.aud !== GOOGLE_TOKEN_URL) return 'wrong audience';
  if (typeof body.exp !== 'number' || body.exp * 1000 < Date.now()) return 'expired';
  return null;
}

export interface VertexFake extends ConformanceFake {
  readonly account: ServiceAccountFile;
  /** The token endpoint's URL (VERTEX_TOKEN_URL). */
  readonly tokenUrl: string;
  tokenRequests(): RecordedRequest[];
}

function googleError(response: ServerResponse, code: number, status: string, message: string): void {
  response.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' });
  response.end(JSON.stringify({ error: { code, message, status } }));
}

/** The gateway's environment for the Vertex fake: the service account file, the location, the fake's URLs. */
export function vertexEnv(fake: VertexFake): Record<string, string> {
  return {
    GOOGLE_APPLICATION_CREDENTIALS: fake.account.path,
    GOOGLE_CLOUD_LOCATION: VERTEX_LOCATION,
    VERTEX_BASE_URL: fake.server.url,
    VERTEX_TOKEN_URL: fake.tokenUrl,
  };
}

/**
 * The Vertex front over the publisher the conformance runs on (its chat views are the inner
 * fake's, the credential the bearer), or over a given inner fake of the publisher's own API.
 */
export async function startFakeVertex(publisher: 'google' | 'anthropic', given?: ConformanceFake): Promise<VertexFake> {
  const account = writeServiceAccountFile();
  const inner = given ?? (publisher === 'google' ? await startGeminiConformanceFake() : await startAnthropicConformanceFake());
  const server = await startFakeServer();
  const tokens = new Set<string>();
  const tokenRequests: RecordedRequest[] = [];
  const bearers: string[] = [];

  server.on('POST /token', (request, response) => {
    tokenRequests.push(request);
    const form = new URLSearchParams(request.rawBody.toString('utf8'));
    const problem = form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer' ? 'unsupported grant type' : assertionProblem(form.get('assertion') ?? '', account);
    if (problem !== null) {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'invalid_grant', error_description: problem }));
      return;
    }
    const token = `ya29.fake-access-token-${tokens.size + 1}`;
    tokens.add(token);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ access_token: token, expires_in: 3599, token_type: 'Bearer' }));
  });

  server.on('POST /v1/projects/*', async (request, response) => {
    const match = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)(\?alt=sse)?$/.exec(request.path);
    if (match === null || match[1] !== VERTEX_PROJECT || match[2] !== VERTEX_LOCATION) return googleError(response, 404, 'NOT_FOUND', `The requested URL ${request.path} was not found.`);
    const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    if (bearer === undefined || !tokens.has(bearer)) return googleError(response, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
    const [, , , owner, model, method, sse] = match as unknown as string[];
    const body: Record<string, unknown> = request.json ?? {};
    if (method === 'predict') {
      const instances = Array.isArray(body.instances) ? (body.instances as { content?: string }[]) : [];
      const predictions = instances.map((instance) => ({ embeddings: { values: [...Buffer.from(String(instance.content)).subarray(0, 4)].map((byte) => byte / 255), statistics: { token_count: 2, truncated: false } } }));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ predictions, metadata: { billableCharacterCount: 10 } }));
      return;
    }
    let path: string;
    let forwarded: Record<string, unknown>;
    let headers: Record<string, string>;
    if (owner === 'anthropic') {
      if (body.anthropic_version !== 'vertex-2023-10-16' || body.model !== undefined || (method !== 'rawPredict' && method !== 'streamRawPredict')) {
        return googleError(response, 400, 'INVALID_ARGUMENT', 'anthropic_version vertex-2023-10-16 is required; model is given in the path');
      }
      const { anthropic_version: _version, ...rest } = body;
      path = '/v1/messages';
      forwarded = { ...rest, model: decodeURIComponent(model!) };
      headers = { 'x-api-key': FAKE_ANTHROPIC_KEY, 'anthropic-version': '2023-06-01' };
    } else {
      path = `/v1beta/models/${model}:${method}${sse ?? ''}`;
      forwarded = body;
      headers = { 'x-goog-api-key': FAKE_GEMINI_KEY };
    }
    bearers.push(bearer);
    await forwardTo(response, `${inner.server.url}${path}`, { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(forwarded) }, ['request-id']);
  });

  return {
    server,
    account,
    tokenUrl: `${server.url}/token`,
    tokenRequests: () => tokenRequests,
    scriptChat: (script) => inner.scriptChat(script),
    chatRequests: (): UpstreamChatView[] => inner.chatRequests().map((view, index) => ({ ...view, credential: bearers[index] })),
    close: async () => {
      await server.close();
      await inner.close();
    },
  };
}
