import type { JWT } from 'google-auth-library';
import { GatewayError } from '../../errors/index.js';
import { readServiceAccountKey, type VertexSettings } from './settings.js';

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/**
 * OAuth access tokens of a service account (google-auth-library's JWT client: a signed JWT
 * exchanged at Google's token endpoint), cached and renewed before they expire; or the
 * configured access token as it is.
 */
export function vertexTokenHeaders(provider: string, settings: VertexSettings): () => Promise<Record<string, string>> {
  const key = readServiceAccountKey(settings.credentialsFile);
  if (key === null) {
    const bearer = { authorization: `Bearer ${settings.accessToken ?? ''}` };
    return async () => bearer;
  }
  // The library (and its HTTP stack) loads with the first request, not with every gateway.
  let client: Promise<JWT> | undefined;
  const jwtClient = async (): Promise<JWT> => {
    const { JWT } = await import('google-auth-library');
    const jwt = new JWT({ email: key.client_email, key: key.private_key, scopes: [SCOPE] });
    if (settings.tokenUrl !== GOOGLE_TOKEN_URL) {
      // The library posts to Google's endpoint; a proxy's (or a test's) takes its place.
      jwt.transporter.interceptors.request.add({ resolved: async (config) => (String(config.url) === GOOGLE_TOKEN_URL ? Object.assign(config, { url: settings.tokenUrl }) : config) });
    }
    return jwt;
  };
  return async () => {
    try {
      const { token } = await (await (client ??= jwtClient())).getAccessToken();
      if (typeof token !== 'string' || token.length === 0) throw new Error('no access token');
      return { authorization: `Bearer ${token}` };
    } catch (error) {
      throw new GatewayError('provider_error', 'The model provider refused the request. The gateway operator has been notified; try again later.', {
        logDetail: { reason: 'service account token exchange failed' },
        upstream: { provider, message: (error as Error).message.slice(0, 300), fault: 'credential_refused' },
        retryable: false,
      });
    }
  };
}
