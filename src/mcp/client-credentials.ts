import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { fetchToken } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ServerCredentials } from './credentials.js';

/** Seconds before its expiry a token is replaced, so a request never leaves with one about to lapse. */
const EXPIRY_MARGIN_MS = 30_000;

/**
 * Access tokens of the OAuth 2.1 client credentials grant, from the configured token endpoint
 * (the SDK's client-credentials provider and token request; no discovery: the operator named
 * the endpoint). One request at a time; a token is reused until shortly before it expires, or
 * until the server refuses it.
 */
export class ClientCredentialsTokens {
  private current: { token: string; expiresAt: number } | undefined;
  private pending: Promise<string> | undefined;
  private readonly provider: ClientCredentialsProvider;
  private readonly issuer: string;

  constructor(
    private readonly settings: NonNullable<ServerCredentials['oauth']>,
    private readonly fetchFn: FetchLike,
  ) {
    this.issuer = new URL(settings.tokenUrl).origin;
    this.provider = new ClientCredentialsProvider({
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      clientName: 'modelgate',
      expectedIssuer: this.issuer,
      ...(settings.scope !== undefined ? { scope: settings.scope } : {}),
    });
  }

  token(): Promise<string> {
    if (this.current !== undefined && this.current.expiresAt > Date.now()) return Promise.resolve(this.current.token);
    this.pending ??= this.request().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** The server refused the token: the next request gets a new one. */
  invalidate(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  private async request(): Promise<string> {
    const tokens = await fetchToken(this.provider, this.issuer, {
      metadata: { issuer: this.issuer, token_endpoint: this.settings.tokenUrl, response_types_supported: [], authorization_endpoint: this.settings.tokenUrl },
      fetchFn: this.fetchFn,
    });
    const lifetimeMs = (tokens.expires_in ?? 3600) * 1000;
    this.current = { token: tokens.access_token, expiresAt: Date.now() + Math.max(0, lifetimeMs - EXPIRY_MARGIN_MS) };
    return tokens.access_token;
  }
}
