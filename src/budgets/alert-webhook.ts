import { createHmac } from 'node:crypto';
import { Agent } from 'undici';
import { AddressPolicy, checkedLookup, literalAddressRefusal, type Resolver } from '../network/index.js';

/** One alert webhook of the config (`budgets.alerts.webhooks[]`). */
export interface AlertWebhookSettings {
  url: string;
  secretEnv: string;
  /** `json`: the gateway's own body; `slack`: a Slack-compatible `{ text }` body (incoming webhooks). */
  format: 'json' | 'slack';
  allowAddresses: string[];
  timeoutMs: number;
}

/** What tests swap: how host names resolve, and extra trusted CAs. */
export interface AlertTransport {
  resolver?: Resolver;
  ca?: string | Buffer;
}

export const ALERT_SIGNATURE_HEADER = 'x-modelgate-signature';
const CONNECT_TIMEOUT_MS = 5_000;

/** As the guardrail webhook's: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export function alertSignature(secret: string, seconds: number, body: string): string {
  return `t=${seconds},v1=${createHmac('sha256', secret).update(`${seconds}.${body}`).digest('hex')}`;
}

export class AlertConfigError extends Error {}

/**
 * A budget alert's webhook: the body signed as the guardrail webhook signs its (docs/limits.md#alerts),
 * under the same address rules — https only, no credentials in the URL, every address the
 * host resolves to passing the address policy (private and loopback refused unless
 * allowAddresses lists them). Redirects are not followed; any answer but a 2xx is a failure.
 */
export class AlertWebhook {
  private readonly url: URL;
  private readonly secret: string;
  private readonly policy: AddressPolicy;
  private agent: Agent | null = null;

  constructor(
    private readonly settings: AlertWebhookSettings,
    field: string,
    env: Readonly<Record<string, string | undefined>>,
    private readonly transport: AlertTransport = {},
  ) {
    try {
      this.url = new URL(settings.url);
    } catch {
      throw new AlertConfigError(`invalid setting ${field}.url: not a URL`);
    }
    if (this.url.protocol !== 'https:') throw new AlertConfigError(`invalid setting ${field}.url: an alert webhook is called over https only`);
    if (this.url.username !== '' || this.url.password !== '') throw new AlertConfigError(`invalid setting ${field}.url: put no credentials in the URL; the body is signed instead`);
    this.policy = new AddressPolicy(settings.allowAddresses, `${field}.allowAddresses`);
    const refusal = literalAddressRefusal(this.policy, this.url);
    if (refusal !== null) throw new AlertConfigError(`invalid setting ${field}.url: ${refusal}; list it in allowAddresses to allow it`);
    const secret = env[settings.secretEnv];
    if (secret === undefined || secret.length < 16) throw new AlertConfigError(`invalid setting ${field}.secretEnv: set the environment variable ${settings.secretEnv} to the webhook's signing key (16 characters or more)`);
    this.secret = secret;
  }

  get format(): 'json' | 'slack' {
    return this.settings.format;
  }

  /** POSTs `body` (JSON text) signed; rejects on anything but a 2xx within the timeout. */
  async send(body: string): Promise<void> {
    this.agent ??= new Agent({
      connect: { lookup: checkedLookup(this.policy, this.transport.resolver), timeout: CONNECT_TIMEOUT_MS, ...(this.transport.ca !== undefined ? { ca: this.transport.ca } : {}) },
      connections: 4,
    });
    const response = await this.agent.request({
      origin: this.url.origin,
      path: `${this.url.pathname}${this.url.search}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'modelgate-budget-alert', [ALERT_SIGNATURE_HEADER]: alertSignature(this.secret, Math.floor(Date.now() / 1000), body) },
      body,
      signal: AbortSignal.timeout(this.settings.timeoutMs),
    });
    await response.body.dump();
    if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`the webhook answered ${response.statusCode}`);
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }
}
