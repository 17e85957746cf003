import { createHmac } from 'node:crypto';
import { Agent } from 'undici';
import { AddressPolicy, AddressPolicyError, checkedLookup, literalAddressRefusal, type Resolver } from '../network/index.js';
import type { CheckScope, VerdictCheck } from './check-types.js';
import { fieldOf, GuardrailConfigError, type GuardrailCheckSpec } from './policy.js';

/**
 * A webhook guardrail (docs/guardrails.md#webhooks): the stage's texts and the call's metadata
 * POSTed as JSON to the operator's https service, the body signed with HMAC-SHA256 in
 * `x-modelgate-signature: t=<unix seconds>,v1=<hex>` over `<t>.<body>`. The address rules are
 * those of agents' `http` nodes (src/network): https only, no credentials in the URL, and every
 * address the host resolves to must pass the address policy (private, loopback and link-local
 * refused unless allowAddresses lists them), the socket connecting to exactly the address
 * checked. Redirects are not followed. Only a 2xx answer that is a JSON object with a boolean
 * `flagged` is a verdict; anything else, a timeout included, is a failed check (onError decides).
 */

type WebhookOptions = Extract<GuardrailCheckSpec, { check: 'webhook' }>['options'];

/** What tests swap: how host names resolve, and extra trusted CAs. */
export interface WebhookTransport {
  resolver?: Resolver;
  ca?: string | Buffer;
}

export const SIGNATURE_HEADER = 'x-modelgate-signature';
const MAX_ANSWER_BYTES = 64 * 1024;
const CONNECT_TIMEOUT_MS = 5_000;

/** The signature header's value for a body sent at `seconds` (a receiver recomputes it with the shared key). */
export function webhookSignature(secret: string, seconds: number, body: string): string {
  return `t=${seconds},v1=${createHmac('sha256', secret).update(`${seconds}.${body}`).digest('hex')}`;
}

export class WebhookCheck implements VerdictCheck {
  readonly kind = 'verdict';
  readonly maskable = false;
  private readonly url: URL;
  private readonly secret: string;
  private readonly policy: AddressPolicy;
  private agent: Agent | null = null;

  constructor(
    private readonly options: WebhookOptions,
    field: string,
    env: Readonly<Record<string, string | undefined>>,
    private readonly transport: WebhookTransport = {},
  ) {
    try {
      this.url = new URL(options.url);
    } catch {
      throw new GuardrailConfigError(`invalid setting ${fieldOf(field, 'options')}.url: not a URL`);
    }
    if (this.url.protocol !== 'https:') throw new GuardrailConfigError(`invalid setting ${fieldOf(field, 'options')}.url: a webhook is called over https only`);
    if (this.url.username !== '' || this.url.password !== '') throw new GuardrailConfigError(`invalid setting ${fieldOf(field, 'options')}.url: put no credentials in the URL; the body is signed instead`);
    try {
      this.policy = new AddressPolicy(options.allowAddresses, `${fieldOf(field, 'options')}.allowAddresses`);
    } catch (error) {
      if (error instanceof AddressPolicyError) throw new GuardrailConfigError(`invalid setting ${error.message}`);
      throw error;
    }
    const refusal = literalAddressRefusal(this.policy, this.url);
    if (refusal !== null) throw new GuardrailConfigError(`invalid setting ${fieldOf(field, 'options')}.url: ${refusal}; list it in allowAddresses to allow it`);
    const secret = env[options.secretEnv];
    if (secret === undefined || secret.length < 16) throw new GuardrailConfigError(`invalid setting ${fieldOf(field, 'options')}.secretEnv: set the environment variable ${options.secretEnv} to the webhook's signing key (16 characters or more)`);
    this.secret = secret;
  }

  async judge(texts: readonly string[], scope: CheckScope, guardrail: string): Promise<boolean> {
    const body = JSON.stringify({ guardrail, stage: scope.stage, texts, metadata: scope.metadata });
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = scope.signal === undefined ? timeout : AbortSignal.any([scope.signal, timeout]);
    this.agent ??= new Agent({
      connect: { lookup: checkedLookup(this.policy, this.transport.resolver), timeout: CONNECT_TIMEOUT_MS, ...(this.transport.ca !== undefined ? { ca: this.transport.ca } : {}) },
      connections: 16,
    });
    const response = await this.agent.request({
      origin: this.url.origin,
      path: `${this.url.pathname}${this.url.search}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'modelgate-guardrail', [SIGNATURE_HEADER]: webhookSignature(this.secret, Math.floor(Date.now() / 1000), body) },
      body,
      signal,
    });
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of response.body) {
      total += (chunk as Buffer).length;
      if (total > MAX_ANSWER_BYTES) {
        response.body.destroy();
        throw new Error(`webhook answer larger than ${MAX_ANSWER_BYTES} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`webhook answered ${response.statusCode}`);
    const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    const flagged = typeof answer === 'object' && answer !== null && !Array.isArray(answer) ? (answer as { flagged?: unknown }).flagged : undefined;
    if (typeof flagged !== 'boolean') throw new Error('the webhook gave no verdict');
    return flagged;
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }
}
