import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { BedrockSettings } from './settings.js';

/** The headers that authorise one Bedrock call: a Signature V4 (AWS's signer) or a Bedrock API key. */
export interface BedrockAuthoriser {
  headers(url: URL, headers: Record<string, string>, body: string): Promise<Record<string, string>>;
}

/** Signs with the access key pair (and session token) for service `bedrock` in the region; or sends the API key as a bearer. */
export function bedrockAuthoriser(settings: BedrockSettings): BedrockAuthoriser {
  if (settings.apiKey !== undefined) {
    const bearer = `Bearer ${settings.apiKey}`;
    return { headers: async (_url, headers) => ({ ...headers, authorization: bearer }) };
  }
  const signer = new SignatureV4({
    service: 'bedrock',
    region: settings.region ?? 'us-east-1',
    // What the AWS SDK for JavaScript gives its signer in Node.
    sha256: Hash.bind(null, 'sha256'),
    credentials: {
      accessKeyId: settings.accessKeyId ?? '',
      secretAccessKey: settings.secretAccessKey ?? '',
      ...(settings.sessionToken === undefined ? {} : { sessionToken: settings.sessionToken }),
    },
  });
  return {
    async headers(url, headers, body) {
      const signed = await signer.sign({
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port === '' ? {} : { port: Number(url.port) }),
        path: url.pathname,
        query: {},
        headers: { ...headers, host: url.host },
        body,
      });
      return signed.headers as Record<string, string>;
    },
  };
}
