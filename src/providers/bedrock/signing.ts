import type { SignatureV4 } from '@smithy/signature-v4';
import { GatewayError } from '../../errors/index.js';
import { bedrockCredentialKind, type BedrockSettings } from './settings.js';

/** The headers that authorise one Bedrock call: a Signature V4 (AWS's signer) or a Bedrock API key. */
export interface BedrockAuthoriser {
  headers(url: URL, headers: Record<string, string>, body: string): Promise<Record<string, string>>;
}

/**
 * Signs for service `bedrock` in the region with the access key pair (and session token) or
 * with what AWS's credential chain finds (its provider caches them and renews them before they
 * expire); or sends the API key as a bearer.
 */
export function bedrockAuthoriser(provider: string, settings: BedrockSettings): BedrockAuthoriser {
  const kind = bedrockCredentialKind(settings);
  if (kind === 'api-key') {
    const bearer = `Bearer ${settings.apiKey}`;
    return { headers: async (_url, headers) => ({ ...headers, authorization: bearer }) };
  }
  // AWS's signer and credential chain load with the first request, not with every gateway.
  let signer: Promise<SignatureV4> | undefined;
  const loadSigner = async (): Promise<SignatureV4> => {
    const [{ SignatureV4 }, { Hash }, { defaultProvider }] = await Promise.all([
      import('@smithy/signature-v4'),
      import('@smithy/hash-node'),
      import('@aws-sdk/credential-provider-node'),
    ]);
    return new SignatureV4({
      service: 'bedrock',
      region: settings.region ?? 'us-east-1',
      // What the AWS SDK for JavaScript gives its signer in Node.
      sha256: Hash.bind(null, 'sha256'),
      credentials:
        kind === 'chain'
          ? defaultProvider(settings.profile === undefined ? {} : { profile: settings.profile })
          : {
              accessKeyId: settings.accessKeyId ?? '',
              secretAccessKey: settings.secretAccessKey ?? '',
              ...(settings.sessionToken === undefined ? {} : { sessionToken: settings.sessionToken }),
            },
    });
  };
  return {
    async headers(url, headers, body) {
      const signed = await (await (signer ??= loadSigner())).sign({
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port === '' ? {} : { port: Number(url.port) }),
        path: url.pathname,
        query: {},
        headers: { ...headers, host: url.host },
        body,
      }).catch((error: unknown) => {
        // Only the chain can fail here: no profile, an expired SSO session, a role that cannot be assumed.
        throw new GatewayError('provider_error', 'The model provider refused the request. The gateway operator has been notified; try again later.', {
          logDetail: { reason: "AWS's credential chain gave no credentials" },
          upstream: { provider, message: (error as Error).message.slice(0, 300), fault: 'credential_refused' },
          retryable: false,
        });
      });
      return signed.headers as Record<string, string>;
    },
  };
}
