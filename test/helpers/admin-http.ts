import { TEST_ADMIN_TOKEN, type TestGateway } from './gateway.js';

/** An answer read whole: its JSON body (null when empty), its text and its request id. */
export interface HttpAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever the route answered
  body: any;
  text: string;
  requestId: string;
}

/** A request over the gateway's listener, as the admin token unless other headers are given; a body goes as JSON. */
export async function sendJson(gateway: TestGateway, method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }): Promise<HttpAnswer> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, text, body: text.length > 0 ? JSON.parse(text) : null, requestId: response.headers.get('x-request-id') ?? '' };
}
