import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Provider } from '../../src/model-api/index.js';
import { stringify as toYaml } from 'yaml';
import { loadConfig, type GatewayConfig } from '../../src/config/index.js';
import { startGateway, type RunningGateway, type StartOptions } from '../../src/server/gateway.js';
import type { WebhookTransport } from '../../src/guardrails/index.js';
import type { RouteModule } from '../../src/server/app.js';
import type { Scope } from '../../src/keys/index.js';

export const TEST_ADMIN_TOKEN = 'mg-admin-test-token-0123456789abcdef';

/** Credentials no vendor accepts; tests that reach a vendor point its base URL at a fake. */
export const PLACEHOLDER_PROVIDER_KEYS = {
  OPENAI_API_KEY: 'sk-placeholder-openai',
  GEMINI_API_KEY: 'placeholder-gemini',
  ANTHROPIC_API_KEY: 'sk-ant-placeholder',
} as const;

export interface TestGatewayOptions {
  /** Environment variables on top of the test defaults. */
  env?: Record<string, string>;
  /** Config file contents (written as modelgate.yaml in the temp dir). */
  configFile?: Record<string, unknown>;
  /** Reuse a data dir (restart tests). */
  dataDir?: string;
  /** Route modules to serve instead of all of them (tests of one concern). */
  routes?: readonly RouteModule[];
  /** The process logger (tests that read what it writes); silent by default. */
  logger?: Logger;
  /** In-process providers in place of the configured ones of the same names. */
  providers?: readonly Provider[];
  /** The sign-in throttle's clock and password check. */
  accounts?: StartOptions['accounts'];
  /** How guardrail webhooks resolve and which CAs they trust (a local https server). */
  guardrailWebhooks?: WebhookTransport;
  /** How budget alert webhooks resolve and which CAs they trust (a local https server). */
  budgetAlertWebhooks?: StartOptions['budgetAlertWebhooks'];
  /** The clock budget periods are computed with. */
  budgetClock?: () => number;
}

export interface TestGateway {
  readonly url: string;
  /**
   * `fetch` answered in-process by Fastify's inject, no socket: for admin API and other
   * requests the request log does not record, read whole. Model requests go to the real
   * listener (`url`): their record tells an answer the client received from one it left by the
   * state of the connection, which inject has none of. Takes a path or an absolute URL on `url`.
   */
  readonly fetch: typeof fetch;
  readonly gateway: RunningGateway;
  readonly config: GatewayConfig;
  readonly dataDir: string;
  /** Creates a key directly through the key store and returns its secret. */
  createKey(options?: KeyOptions): Promise<string>;
  /** Sends an admin API request with the admin token. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read many response shapes; each asserts what it reads
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export interface KeyOptions {
  scopes?: Scope[];
  projectId?: string;
  rpm?: number | null;
  dailyTokens?: number | null;
  monthlyCostUsd?: number | null;
  allowedModels?: string[] | null;
  allowedTools?: string[] | null;
  allowUnpriced?: boolean;
}

/** Starts a real gateway on 127.0.0.1:<random port> with a temp data dir and silent logs. */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-test-'));
  const dataDir = options.dataDir ?? join(dir, 'data');
  const env: Record<string, string> = {
    MODELGATE_PORT: '0',
    MODELGATE_DATA_DIR: dataDir,
    MODELGATE_LOG_LEVEL: 'silent',
    MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    // Every vendor configured, as an operator in production has them: a test of an
    // unconfigured provider passes its variable empty (empty counts as unset).
    ...PLACEHOLDER_PROVIDER_KEYS,
    ...options.env,
  };
  if (options.configFile !== undefined) {
    const path = join(dir, 'modelgate.yaml');
    writeFileSync(path, toYaml(options.configFile));
    env.MODELGATE_CONFIG = path;
  }
  const config = loadConfig({ env, cwd: dir });
  const gateway = await startGateway(config, {
    env,
    ...(options.routes !== undefined ? { routes: options.routes } : {}),
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
    ...(options.providers !== undefined ? { providers: options.providers } : {}),
    ...(options.accounts !== undefined ? { accounts: options.accounts } : {}),
    ...(options.guardrailWebhooks !== undefined ? { guardrailWebhooks: options.guardrailWebhooks } : {}),
    ...(options.budgetAlertWebhooks !== undefined ? { budgetAlertWebhooks: options.budgetAlertWebhooks } : {}),
    ...(options.budgetClock !== undefined ? { budgetClock: options.budgetClock } : {}),
  });
  const url = gateway.url;
  const inProcessFetch = injectingFetch(gateway, url);
  return {
    url,
    fetch: inProcessFetch,
    gateway,
    config,
    dataDir,
    async createKey(keyOptions: KeyOptions = {}) {
      const { row, secret } = await gateway.context.keys.store.create({
        name: 'test',
        projectId: keyOptions.projectId ?? 'default',
        scopes: keyOptions.scopes ?? ['model:request', 'utils:crypto', 'agents:execute'],
        limits: {
          rpm: keyOptions.rpm ?? null,
          dailyTokens: keyOptions.dailyTokens ?? null,
          monthlyCostUsd: keyOptions.monthlyCostUsd ?? null,
        },
        allowedModels: keyOptions.allowedModels ?? null,
        allowedTools: keyOptions.allowedTools ?? null,
        allowUnpriced: keyOptions.allowUnpriced ?? false,
      });
      gateway.context.keys.cache.put(row);
      return secret;
    },
    async admin(method: string, path: string, body?: unknown) {
      const response = await inProcessFetch(path, {
        method,
        headers: {
          authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      return { status: response.status, body: text.length > 0 ? JSON.parse(text) : null };
    },
    async close() {
      await gateway.close();
      if (options.dataDir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function injectingFetch(gateway: RunningGateway, baseUrl: string): typeof fetch {
  return async (input, init) => {
    const request = new Request(typeof input === 'string' && input.startsWith('/') ? `${baseUrl}${input}` : input, init);
    const target = new URL(request.url);
    const payload = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
    const answer = await gateway.app.inject({
      method: request.method as 'GET',
      url: `${target.pathname}${target.search}`,
      headers: Object.fromEntries(request.headers),
      ...(payload === undefined ? {} : { payload }),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
    }
    const bodyless = answer.statusCode === 204 || answer.statusCode === 304 || request.method === 'HEAD';
    return new Response(bodyless ? null : answer.rawPayload, { status: answer.statusCode, headers });
  };
}

/** The admin view of one request-log record, once the background writer has written it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read many record shapes; each asserts what it reads
export async function loggedRecord(gateway: TestGateway, requestId: string): Promise<any> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    // Refused unauthenticated requests after an address's first wait in a summary until the interval ends.
    gateway.gateway.context.logs.refusals.flush();
    await gateway.gateway.context.logs.writer.flush();
    const found = await gateway.admin('GET', `/admin/v1/logs/${requestId}`);
    if (found.status === 200) return found.body;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no log record for ${requestId}`);
}
