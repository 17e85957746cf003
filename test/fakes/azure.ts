import type { ServerResponse } from 'node:http';
import { forwardTo, startFakeServer, type RecordedRequest } from './fake-server.js';
import { startOpenAIFake, type OpenAIFake } from './openai.js';
import type { ConformanceFake, UpstreamChatView } from '../providers/conformance.js';

/*
 * A fake Azure OpenAI resource, as Azure's REST reference gives its URLs and headers: the v1
 * API (`/openai/v1/<endpoint>`, the deployment as the body's `model`) or the deployment paths
 * (`/openai/deployments/{deployment}/<endpoint>?api-version=…`), the `api-key` header or an
 * Entra ID bearer token, and a fake token endpoint (`/{tenant}/oauth2/v2.0/token`, the client
 * credentials grant). A request with the wrong URL, version or credential gets Azure's 404 or
 * 401; the others are answered by the OpenAI fake behind it (Azure's bodies are OpenAI's).
 */

export const AZURE_KEY = 'fake-azure-api-key-0123456789';
export const ENTRA = { tenantId: 'tenant-0123', clientId: 'client-0123', clientSecret: 'fake-entra-secret-0123456789' } as const;

export interface AzureFake extends ConformanceFake {
  readonly openai: OpenAIFake;
  /** Token requests received at the fake token endpoint. */
  tokenRequests(): RecordedRequest[];
}

function azureError(response: ServerResponse, status: number, code: string, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json', 'apim-request-id': 'apim-fake' });
  response.end(JSON.stringify({ error: { code, message } }));
}

/** A text field of a multipart form body (transcriptions carry the model there). */
function formField(request: RecordedRequest, name: string): string | undefined {
  return new RegExp(`name="${name}"\r\n(?:[^\r\n]+\r\n)*\r\n([^\r\n]*)`).exec(request.rawBody.toString('latin1'))?.[1];
}

export async function startFakeAzure(options: { apiVersion: string; deployments: Record<string, string>; auth: 'api-key' | 'entra' }): Promise<AzureFake> {
  const openai = await startOpenAIFake();
  const server = await startFakeServer();
  let issued = 0;
  const tokens = new Set<string>();
  const tokenRequests: RecordedRequest[] = [];
  const forwarded: { request: RecordedRequest; credential: string | undefined }[] = [];

  server.on(`POST /${ENTRA.tenantId}/oauth2/v2.0/token`, (request, response) => {
    tokenRequests.push(request);
    const form = new URLSearchParams(request.rawBody.toString('utf8'));
    if (form.get('grant_type') !== 'client_credentials' || form.get('client_id') !== ENTRA.clientId || form.get('client_secret') !== ENTRA.clientSecret || form.get('scope') !== 'https://cognitiveservices.azure.com/.default') {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' }));
      return;
    }
    issued += 1;
    const token = `eyJ0eXAiOiJKV1QifQ.fake-entra-token-${issued}`;
    tokens.add(token);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: token }));
  });

  server.on('POST /openai/*', async (request, response) => {
    const url = new URL(request.path, 'http://fake');
    let endpoint: string;
    let deployment: string | undefined;
    if (options.apiVersion === 'v1') {
      const match = /^\/openai\/v1(\/.+)$/.exec(url.pathname);
      if (match === null) return azureError(response, 404, '404', 'Resource not found');
      endpoint = match[1]!;
      deployment = request.json?.model ?? formField(request, 'model');
    } else {
      const responses = url.pathname === '/openai/responses';
      const match = /^\/openai\/deployments\/([^/]+)(\/.+)$/.exec(url.pathname);
      if (!responses && match === null) return azureError(response, 404, '404', 'Resource not found');
      if (url.searchParams.get('api-version') !== (responses ? '2025-04-01-preview' : options.apiVersion)) {
        return azureError(response, 404, '404', 'Resource not found');
      }
      endpoint = responses ? '/responses' : match![2]!;
      deployment = responses ? request.json?.model : decodeURIComponent(match![1]!);
    }
    const credential = options.auth === 'api-key' ? request.headers['api-key'] : /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    const valid = options.auth === 'api-key' ? credential === AZURE_KEY : credential !== undefined && tokens.has(String(credential));
    if (!valid) return azureError(response, 401, '401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.');
    if (deployment === undefined || options.deployments[deployment] === undefined) {
      return azureError(response, 404, 'DeploymentNotFound', 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.');
    }
    forwarded.push({ request, credential: String(credential) });
    const contentType = String(request.headers['content-type'] ?? 'application/json');
    await forwardTo(response, `${openai.server.url}/v1${endpoint}`, { headers: { 'content-type': contentType, authorization: 'Bearer fake' }, body: new Uint8Array(request.rawBody) });
  });

  const chatRequests = (): UpstreamChatView[] => {
    const views = openai.chatRequests();
    const chats = forwarded.filter(({ request }) => /chat\/completions/.test(request.path));
    return views.map((view, index) => ({ ...view, credential: chats[index]?.credential }));
  };

  return {
    server,
    openai,
    scriptChat: (script) => openai.scriptChat(script),
    chatRequests,
    tokenRequests: () => tokenRequests,
    close: async () => {
      await server.close();
      await openai.close();
    },
  };
}
