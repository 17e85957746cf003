import { GatewayError } from '../../errors/index.js';
import { isAnswerStatus, sendUpstreamBuffered, type UpstreamHttpOptions } from '../shared/upstream-http.js';
import type { AzureSettings } from './settings.js';

/** The scope of Azure OpenAI (Cognitive Services) tokens. */
const SCOPE = 'https://cognitiveservices.azure.com/.default';
/** A token is renewed this long before it expires, so no call is sent with one about to lapse. */
const RENEW_BEFORE_MS = 5 * 60_000;
const TOKEN_TIMEOUT_MS = 10_000;

/**
 * Bearer tokens of an Entra ID application (the OAuth 2.0 client credentials grant of the
 * Microsoft identity platform): asked for once, shared by concurrent calls, renewed before
 * they expire.
 */
export class EntraTokens {
  private token: { value: string; expiresAt: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly provider: string,
    private readonly settings: AzureSettings,
    private readonly http: UpstreamHttpOptions,
  ) {}

  async headers(): Promise<Record<string, string>> {
    return { authorization: `Bearer ${await this.current()}` };
  }

  private current(): Promise<string> {
    if (this.token !== undefined && Date.now() < this.token.expiresAt - RENEW_BEFORE_MS) return Promise.resolve(this.token.value);
    this.pending ??= this.fetch().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async fetch(): Promise<string> {
    const url = `${this.settings.authorityHost.replace(/\/+$/, '')}/${encodeURIComponent(this.settings.tenantId ?? '')}/oauth2/v2.0/token`;
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: this.settings.clientId ?? '', client_secret: this.settings.clientSecret ?? '', scope: SCOPE }).toString();
    const response = await sendUpstreamBuffered(this.http, {
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
      provider: this.provider,
    });
    let answer: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
    try {
      answer = JSON.parse(response.body.toString('utf8')) as typeof answer;
    } catch {
      // Reported below.
    }
    if (!isAnswerStatus(response.status) || typeof answer.access_token !== 'string') {
      throw new GatewayError('provider_error', 'The model provider refused the request. The gateway operator has been notified; try again later.', {
        logDetail: { reason: 'Entra ID token request failed' },
        upstream: { provider: this.provider, status: response.status, message: typeof answer.error === 'string' ? answer.error : null, fault: 'credential_refused' },
        retryable: false,
      });
    }
    const seconds = Number(answer.expires_in);
    this.token = { value: answer.access_token, expiresAt: Date.now() + (Number.isFinite(seconds) && seconds > 0 ? seconds : 3600) * 1000 };
    return answer.access_token;
  }
}
