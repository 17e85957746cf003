/**
 * A fake S3-compatible bucket (path-style): PutObject and GetObject as AWS documents them,
 * `NoSuchKey` as the documented XML error body with 404, and `XAmzContentSHA256Mismatch` /
 * `AccessDenied` when the payload hash or the Authorization header is missing or wrong.
 */
import { createHash } from 'node:crypto';
import { startFakeServer, type FakeServer } from './fake-server.js';

export interface FakeS3 {
  readonly server: FakeServer;
  readonly objects: Map<string, Buffer>;
  close(): Promise<void>;
}

function xmlError(code: string, message: string, resource: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><Resource>${resource}</Resource><RequestId>4442587FB7D0A2F9</RequestId></Error>`;
}

export async function startFakeS3(bucket: string, accessKeyId: string): Promise<FakeS3> {
  const server = await startFakeServer();
  const objects = new Map<string, Buffer>();
  const credential = new RegExp(`^AWS4-HMAC-SHA256 Credential=${accessKeyId}/\\d{8}/[a-z0-9-]+/s3/aws4_request,SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*,Signature=[0-9a-f]{64}$`);
  const handler = (method: 'GET' | 'PUT') => (request: Parameters<Parameters<FakeServer['on']>[1]>[0], response: Parameters<Parameters<FakeServer['on']>[1]>[1]) => {
    const key = request.path.slice(`/${bucket}/`.length);
    const fail = (status: number, code: string, message: string) => {
      response.writeHead(status, { 'content-type': 'application/xml' });
      response.end(xmlError(code, message, request.path));
    };
    if (!credential.test(String(request.headers.authorization ?? ''))) return fail(403, 'AccessDenied', 'Access Denied');
    const expected = createHash('sha256').update(request.rawBody).digest('hex');
    if (request.headers['x-amz-content-sha256'] !== expected) {
      return fail(400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed.");
    }
    if (method === 'PUT') {
      objects.set(key, request.rawBody);
      response.writeHead(200, { etag: `"${createHash('md5').update(request.rawBody).digest('hex')}"` });
      response.end();
      return;
    }
    const object = objects.get(key);
    if (object === undefined) return fail(404, 'NoSuchKey', 'The specified key does not exist.');
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(object.length) });
    response.end(object);
  };
  server.on(`PUT /${bucket}/*`, handler('PUT'));
  server.on(`GET /${bucket}/*`, handler('GET'));
  return { server, objects, close: () => server.close() };
}
