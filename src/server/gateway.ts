import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { ConfigError, configuredCredentials, describeStorage, resolveSecrets, type GatewayConfig, type GatewaySecrets, type RoutingEntry } from '../config/index.js';
import { openStorage, storageAnswers, whenStorageAnswers, type Storage, type StorageOptions } from '../storage/index.js';
import { Accounts, createSignInCounts, SingleSignOn, type AccountsOptions } from '../accounts/index.js';
import { Authenticator, KeyCache, KeyPropagation, KeyStore, pageOfKeys, ProjectStore, sharedKeyChannels, TeamStore, type KeyChangeChannel } from '../keys/index.js';
import { Catalog, DEFAULT_CATALOG } from '../catalog/index.js';
import { createProviders, missingCredentials, providerDescriptions, ProviderHealth, ProviderRegistry, type ProviderFaultSink, type ProviderVariants } from '../providers/index.js';
import { compilePlans, createCooldowns, Router } from '../routing/index.js';
import type { Provider } from '../model-api/index.js';
import type { GatewayMetrics } from '../metrics/index.js';
import { addKnownSecrets, overviewOf, recentProviderCalls, redactText, RETENTION_DEFAULTS, RetentionJob, spendOfKeys } from '../logs/index.js';
import { AuditStore } from '../audit/index.js';
import { buildApp, type GatewayApp, type RouteModule } from './app.js';
import { registerAuthHook } from './auth-hook.js';
import { adminAuthHook } from './admin-auth.js';
import { registerRequestRecordHook } from './request-record-hook.js';
import { registerTraceHook } from './trace-hook.js';
import { registerRequestLogHook } from './request-log-hook.js';
import { startAccounting } from './accounting.js';
import type { GatewayContext } from './context.js';
import { finishedRequestObserver, ModelCalls, ProjectPolicies } from '../calls/index.js';
import { Keyring } from '../crypto/index.js';
import { VettingService } from '../vetting/index.js';
import { createAgentServices } from '../agents/index.js';
import { createProcessLogger } from './process-logger.js';
import { PRODUCT_VERSION } from './api-version.js';
import { startTracing, type Tracing } from '../telemetry/index.js';
import { ROUTE_MODULES } from './routes/index.js';
import { McpGateway, McpServerStore } from '../mcp/index.js';
import { startBudgets, type AlertTransport } from '../budgets/index.js';
import { GuardrailConfigError, Guardrails, GuardrailStore, StoredGuardrails, type WebhookTransport } from '../guardrails/index.js';
import { configuredEntries, ProviderInstances, ProviderInstanceStore } from '../provider-instances/index.js';
import { LiveSettings, LiveSettingsStore } from '../live-settings/index.js';
import { standbyWhileWaiting } from './standby.js';
import { createCacheStore, ResponseCache, type CachePolicy } from '../cache/index.js';
import { isGatewayError } from '../errors/index.js';

/** How often a graceful shutdown closes the connections whose requests have finished. */
const IDLE_SWEEP_MS = 50;

export interface RunningGateway {
  readonly app: GatewayApp;
  readonly context: GatewayContext;
  /** The storage and secrets it runs on, for the start-up report and tests (routes get services, not these). */
  readonly storage: Storage;
  readonly secrets: GatewaySecrets;
  /** Base URL it listens on, e.g. http://127.0.0.1:8080 */
  readonly url: string;
  /** Graceful shutdown: stop accepting, finish in-flight requests, flush pending writes. */
  close(): Promise<void>;
}

/** Dashboard single sign-on, when auth.oidc is configured (its secret read from the variable it names). */
function singleSignOnOf(config: GatewayConfig, db: Storage['db'], accounts: Accounts, env: NodeJS.ProcessEnv): SingleSignOn | undefined {
  const settings = config.auth.oidc;
  if (settings === undefined) return undefined;
  const clientSecret = settings.clientSecretEnv === undefined ? undefined : env[settings.clientSecretEnv];
  return new SingleSignOn(db, accounts, { ...settings, clientSecret });
}

export interface StartOptions {
  logger?: Logger;
  /** Route modules to serve (default: all). */
  routes?: readonly RouteModule[];
  /** Do not listen (tests that use inject). */
  listen?: boolean;
  /** Where routing deployments read their `apiKeyEnv` credentials (default: the process's environment). */
  env?: NodeJS.ProcessEnv;
  /** Channels of the process that runs the gateway (a `serve --workers` worker's to its siblings), beside the deployment's own. */
  keyChannels?: readonly KeyChangeChannel[];
  /** Providers built by the caller, in place of the configured ones of the same names (in-process providers of tests and benchmarks). */
  providers?: readonly Provider[];
  /** Told the standby listener's URL when the database does not answer at start-up (it listens meanwhile). */
  onStandby?: (url: string) => void;
  /**
   * Listen on standby while the database does not answer (default true). A `serve --workers`
   * worker does not: the port is shared, and a standby worker would take its siblings' traffic
   * only to answer 503.
   */
  standby?: boolean;
  /** The sign-in throttle's clock, password check and limits (tests hold the clock still, count checks, or let a flood be checked). */
  accounts?: Pick<AccountsOptions, 'now' | 'verify' | 'throttle'>;
  /** How guardrail webhooks resolve hosts and which CAs they trust besides the system's (tests: a local https server). */
  guardrailWebhooks?: WebhookTransport;
  /** How budget alert webhooks resolve hosts and which CAs they trust (tests: a local https server). */
  budgetAlertWebhooks?: AlertTransport;
  /** The clock budget periods are computed with (tests set it). */
  budgetClock?: () => number;
}

/** Provider faults to the operator: counted in metrics, and a warning in the process log (names and counts, never a credential). */
function providerFaultSink(logger: Logger, metrics: GatewayMetrics): ProviderFaultSink {
  return {
    count: (provider, fault) => metrics.countProviderFault(provider, fault),
    notify: ({ provider, fault, failures, since }) => {
      const fields = { provider, fault, failures, since: since.toISOString() };
      if (fault === 'credential_refused') {
        logger.warn(fields, `provider ${provider} refused the gateway's credential or account (${failures} calls since ${fields.since}); callers get 502 provider_error. Check its API key and billing; modelgate logs list --status 502 shows the calls`);
      } else {
        logger.warn(fields, `provider ${provider} has been unreachable since ${fields.since} (${failures} calls failed); callers get 502 provider_error. Check its base URL and the network`);
      }
    },
  };
}

/** The log line of one wait for the database at start-up: what is awaited, why, and for how long. */
export function waitingForStorage(
  config: GatewayConfig,
  log: (fields: Record<string, unknown>, message: string) => void,
): (error: unknown, retryInMs: number) => void {
  const database = describeStorage(config);
  return (error, retryInMs) =>
    log({ database, reason: redactText((error as Error).message ?? String(error)), retryInMs }, `waiting for the database (${database}); next attempt in ${retryInMs / 1000} s`);
}

/** How long between two warnings about a failing response-cache store; the failures between are counted. */
const CACHE_WARNING_INTERVAL_MS = 10_000;

/** How long between two warnings about failed database connections; the ones between are counted. */
const CONNECTION_WARNING_INTERVAL_MS = 10_000;

/** Storage settings from the config; a failed connection is logged as a warning, at most once per interval. */
export function storageOptions(config: GatewayConfig, logger: Logger): StorageOptions {
  let lastWarningAt = 0;
  let failedSinceWarning = 0;
  return {
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    statementTimeoutMs: config.database.statementTimeoutMs,
    onConnectionError(error) {
      failedSinceWarning += 1;
      const now = Date.now();
      if (now - lastWarningAt < CONNECTION_WARNING_INTERVAL_MS) return;
      logger.warn(
        { database: describeStorage(config), reason: redactText(error.message), connectionsFailed: failedSinceWarning },
        'a database connection failed; queries on it fail or are retried, and new connections are opened as needed',
      );
      lastWarningAt = now;
      failedSinceWarning = 0;
    },
  };
}

/** Traces for the configured collector; none without one. */
async function tracingOf(config: GatewayConfig): Promise<Tracing | undefined> {
  const { otlpEndpoint, serviceName } = config.telemetry;
  return otlpEndpoint === undefined ? undefined : startTracing({ otlpEndpoint, serviceName, serviceVersion: PRODUCT_VERSION });
}

/** Builds every service from the config and starts serving. */
export async function startGateway(config: GatewayConfig, options: StartOptions = {}): Promise<RunningGateway> {
  const logger = options.logger ?? createProcessLogger(config.server.logLevel);
  const secrets = resolveSecrets(config);
  addKnownSecrets(configuredCredentials(config, secrets));
  const logWaiting = waitingForStorage(config, (fields, message) => logger.warn(fields, message));
  // A database that does not answer yet: listen at once (healthz 200, readyz 503), serve once it does.
  const standby = standbyWhileWaiting(config, logWaiting, (url) => {
    logger.warn({ url }, `answering on ${url} while waiting for the database: /healthz 200, /readyz 503, other requests 503 storage_unavailable`);
    options.onStandby?.(url);
  });
  const waiting = options.listen === false || options.standby === false ? logWaiting : standby.waiting;
  const storage = await whenStorageAnswers(() => openStorage(storageOptions(config, logger)), waiting).catch(async (error: unknown) => {
    await standby.close();
    throw error;
  });
  const shutdownTasks: (() => Promise<void>)[] = [];
  try {
    const keyStore = new KeyStore(storage.db);
    const keyCache = new KeyCache(keyStore, logger);
    await whenStorageAnswers(() => keyCache.load(), waiting);
    keyCache.start(config.keys.cacheRefreshMs);
    shutdownTasks.push(() => keyCache.stop());
    const keyPropagation = new KeyPropagation(keyCache, [
      ...(options.keyChannels ?? []),
      ...(await sharedKeyChannels({ redisUrl: config.redisUrl, databaseUrl: config.databaseUrl }, storage.db, logger)),
    ]);
    shutdownTasks.push(() => keyPropagation.close());
    await keyPropagation.start();

    const tracing = await tracingOf(config);
    // Registered before the request log's tasks, so it runs after them: the spans they end are exported.
    if (tracing !== undefined) shutdownTasks.push(() => tracing.shutdown());
    const accounting = await startAccounting(config, storage, logger, (task) => shutdownTasks.push(task));
    const created = createProviders(config, tracing === undefined ? {} : { tracing });
    const given = new Map((options.providers ?? []).map((provider) => [provider.name, provider]));
    const providers = new ProviderRegistry(
      created.providers.map((provider) => given.get(provider.name) ?? provider),
      { missingCredentials: missingCredentials(config), descriptions: providerDescriptions(config), health: new ProviderHealth(providerFaultSink(logger, accounting.metrics)) },
    );
    const catalog = new Catalog(DEFAULT_CATALOG, config, providers.names(), providers.unconfiguredNames());
    const keyring = new Keyring(secrets.encryptionKey, secrets.previousEncryptionKeys);
    const providerInstances = new ProviderInstances({
      store: new ProviderInstanceStore(storage.db, keyring, (name) =>
        logger.warn({ provider: name }, `provider ${name} was saved with an encryption key this gateway does not hold (set it in previousEncryptionKeys); it is not served`),
      ),
      registry: providers,
      catalog,
      build: created.instance,
      announcements: keyPropagation,
      configured: configuredEntries(config.providers, options.env ?? process.env),
      logger,
    });
    await whenStorageAnswers(() => providerInstances.start(), waiting);
    const cooldowns = await createCooldowns({ redisUrl: config.redisUrl, keyPrefix: config.limits.redisKeyPrefix, commandTimeoutMs: config.limits.redisCommandTimeoutMs });
    shutdownTasks.push(() => cooldowns.close());
    const router = new Router(cooldowns, accounting.metrics.routing);
    const variants: ProviderVariants = (name, overrides) => {
      const variant = created.variants(name, overrides);
      return variant === undefined ? undefined : providers.watched(variant);
    };
    const planSources = { catalog, providers, variants, env: options.env ?? process.env, defaultTotalMs: config.upstream.timeoutMs };
    const compileRouting = (entries: readonly RoutingEntry[]) => router.update(compilePlans(entries, planSources));
    compileRouting(config.routing);
    // Models, prices, aliases and routing set through the admin API, layered under the config file's.
    const liveSettings = new LiveSettings({
      store: new LiveSettingsStore(storage.db),
      catalog,
      providerNames: () => providers.names(),
      config,
      compileRouting,
      announcements: keyPropagation,
      logger,
    });
    await whenStorageAnswers(() => liveSettings.start(), waiting);
    const applyRouting = (entries: readonly RoutingEntry[]) => liveSettings.applyConfigRouting(entries);
    const observer = finishedRequestObserver({ catalog, metrics: accounting.metrics, tracing, warn: (fields, message) => logger.warn(fields, message) });
    // Always built: guardrails defined through the admin API may come at any time (none attached costs a loop over none).
    const guardrails = new Guardrails(config.guardrails, {
      env: options.env ?? process.env,
      ...(options.guardrailWebhooks !== undefined ? { webhookTransport: options.guardrailWebhooks } : {}),
      moderation: (provider) => providers.get(provider).moderation,
    });
    shutdownTasks.push(() => guardrails.close());
    const checkerModelProblem = (model: string): string | null => {
      try {
        catalog.resolve(model, { mode: 'chat', param: 'model' });
        return null;
      } catch (error) {
        return `"${model}" is not a chat model of the catalog (${(error as Error).message})`;
      }
    };
    const moderationProblem = (provider: string): string | null => {
      if (providers.state(provider) === 'absent') return `"${provider}" is not a provider of this gateway`;
      return providers.state(provider) === 'callable' && providers.get(provider).moderation === undefined ? `the provider "${provider}" has no moderation endpoint` : null;
    };
    // A model guardrail names a chat model of the catalog, a moderation one a provider with the endpoint: one that does not stops start-up.
    for (const { model, field } of guardrails.checkerModels) {
      const problem = checkerModelProblem(model);
      if (problem !== null) throw new ConfigError(`invalid setting ${field}: ${problem}`);
    }
    for (const { provider, field } of guardrails.moderationProviders) {
      const problem = moderationProblem(provider);
      if (problem !== null) throw new ConfigError(`invalid setting ${field}: ${problem}`);
    }
    const storedGuardrails = new StoredGuardrails({
      store: new GuardrailStore(storage.db),
      guardrails,
      announcements: keyPropagation,
      checkReferences: (entry) => {
        const options = entry.options as { model?: unknown; provider?: unknown };
        const problem =
          entry.check === 'model' ? checkerModelProblem(String(options.model)) : entry.check === 'moderation' ? moderationProblem(String(options.provider)) : null;
        if (problem !== null) throw new GuardrailConfigError(`invalid setting options.${entry.check === 'model' ? 'model' : 'provider'}: ${problem}`);
      },
      logger,
    });
    await whenStorageAnswers(() => storedGuardrails.start(), waiting);
    const cacheStore = await createCacheStore({
      redisUrl: config.redisUrl,
      keyPrefix: `${config.limits.redisKeyPrefix}cache:`,
      commandTimeoutMs: config.limits.redisCommandTimeoutMs,
    });
    const cacheMetrics = accounting.metrics.cache;
    let lastCacheWarningAt = 0;
    let cacheFailures = 0;
    const cache = new ResponseCache({ policies: config.cache, retentionDays: config.logs.retentionDays }, cacheStore, {
      looked: (policy, surface, status) => cacheMetrics.looked(policy, surface, status),
      kept: (policy, bytes) => cacheMetrics.kept(policy, bytes),
      evicted: (policy, entries) => cacheMetrics.evicted(policy, entries),
      failed: (error) => {
        cacheMetrics.failed();
        // Once per interval: a Redis that is away would otherwise write a warning per request.
        cacheFailures += 1;
        const now = Date.now();
        if (now - lastCacheWarningAt < CACHE_WARNING_INTERVAL_MS) return;
        logger.warn({ reason: redactText((error as Error).message ?? String(error)), failures: cacheFailures }, 'the response cache store failed; requests go on without the cache');
        lastCacheWarningAt = now;
        cacheFailures = 0;
      },
    });
    cacheMetrics.watchHeldBytes(() => cache.heldBytes());
    checkSemanticPolicies(config.cache, catalog);
    shutdownTasks.push(() => cache.close());
    const budgets = await whenStorageAnswers(
      () =>
        startBudgets({
          config,
          db: storage.db,
          limiter: accounting.limits,
          logger,
          env: options.env ?? process.env,
          encryptionKey: secrets.encryptionKey,
          announcements: keyPropagation,
          ...(options.budgetAlertWebhooks === undefined ? {} : { alertTransport: options.budgetAlertWebhooks }),
          ...(options.budgetClock === undefined ? {} : { now: options.budgetClock }),
        }),
      waiting,
    );
    shutdownTasks.push(() => budgets.stop());
    const calls = new ModelCalls(catalog, providers, accounting.limits, router, observer, guardrails, cache, new ProjectPolicies(config.projects), budgets.calls);
    const vetting = new VettingService(config.vetting, catalog, keyring);
    // llm nodes reach the MCP gateway (made below) only once a run starts.
    const agents = createAgentServices({ config, db: storage.db, catalog, logger, tools: { toolSource: (principal, narrowing) => mcp.toolSource(principal, narrowing) } });
    shutdownTasks.push(() => agents.close());
    // Conversation history holds what callers and models wrote, as payloads do: kept as long.
    accounting.retain(agents.conversations, 'agent conversation messages');
    const projects = new ProjectStore(storage.db);
    const signInCounts = await createSignInCounts({ redisUrl: config.redisUrl, keyPrefix: config.limits.redisKeyPrefix, commandTimeoutMs: config.limits.redisCommandTimeoutMs });
    if (signInCounts !== undefined) shutdownTasks.push(() => signInCounts.close());
    const accounts = new Accounts(storage.db, { ...options.accounts, ...(signInCounts === undefined ? {} : { sharedCounts: signInCounts }) });
    const singleSignOn = singleSignOnOf(config, storage.db, accounts, options.env ?? process.env);
    const audit = new AuditStore(storage.db);
    // Kept for its own time (audit.retentionDays), however long the request log is.
    const auditRetention = new RetentionJob(audit, { retentionDays: config.audit.retentionDays, ...RETENTION_DEFAULTS, rows: 'audit log entries' }, logger);
    auditRetention.start();
    shutdownTasks.push(() => auditRetention.stop());
    const mcp = new McpGateway({
      settings: config.mcp,
      env: options.env ?? process.env,
      log: logger,
      sinks: {
        writer: accounting.logs.writer,
        metrics: accounting.metrics.mcp,
        tracing,
      },
      limits: accounting.limits,
      projectAllowedTools: (projectId) => projects.allowedToolsOf(projectId),
      projectListRefreshMs: config.keys.cacheRefreshMs,
      product: { name: 'modelgate', version: PRODUCT_VERSION },
      store: new McpServerStore(storage.db),
      guardrails,
    });
    shutdownTasks.push(() => mcp.close());
    await whenStorageAnswers(() => mcp.start(), waiting);
    const context: GatewayContext = {
      config,
      database: { kind: storage.kind, answers: (withinMs) => storageAnswers(storage, withinMs) },
      adminAuthentication: adminAuthHook(secrets.adminToken, accounts),
      logger,
      catalog,
      providers,
      providerInstances,
      liveSettings,
      keys: {
        store: keyStore,
        cache: keyCache,
        propagation: keyPropagation,
        authenticator: new Authenticator(keyCache, { requireKeys: config.requireKeys }),
        projects,
        teams: new TeamStore(storage.db),
        page: (query) => pageOfKeys(storage.db, query),
      },
      logs: {
        ...accounting.logs,
        spendOf: (keyIds) => spendOfKeys(storage.db, keyIds),
        recentProviderCalls: (since) => recentProviderCalls(storage.db, since),
        overview: (since, bucketMinutes) => overviewOf(storage.db, since, bucketMinutes),
      },
      routing: { deploymentStates: () => router.deploymentStates() },
      limits: accounting.limits,
      metrics: accounting.metrics,
      responses: accounting.responses,
      tracing,
      calls,
      guardrails,
      storedGuardrails,
      cache,
      keyring,
      vetting,
      applyRouting,
      agents,
      mcp,
      audit,
      budgets,
      accounts,
      singleSignOn,
      onShutdown: (task) => shutdownTasks.push(task),
    };
    const app = await buildApp(context, {
      hooks: [registerRequestRecordHook, registerTraceHook, registerRequestLogHook, registerAuthHook],
      routes: options.routes ?? ROUTE_MODULES,
    });
    let url = '';
    if (options.listen !== false) {
      // The standby listener hands its address over (its port, when the config asked for any).
      const standbyPort = await standby.close();
      await app.listen({ host: config.server.host, port: standbyPort ?? config.server.port });
      const address = app.server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      url = `http://${host}:${address.port}`;
    } else {
      await app.ready();
    }

    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= (async () => {
        const grace = setTimeout(() => app.server.closeAllConnections?.(), config.server.shutdownGraceMs);
        grace.unref();
        // A client that keeps its connection alive (the OpenAI SDKs do) would hold the close open
        // until the grace period ends after its last response; close each connection once idle.
        const idleSweep = setInterval(() => app.server.closeIdleConnections?.(), IDLE_SWEEP_MS);
        idleSweep.unref();
        await app.close();
        clearTimeout(grace);
        clearInterval(idleSweep);
        // Later-registered tasks depend on earlier services (log writer before storage), so run in reverse.
        for (const task of shutdownTasks.reverse()) await task();
        await storage.close();
      })();
      return closing;
    };
    return { app, context, storage, secrets, url, close };
  } catch (error) {
    await standby.close();
    for (const task of shutdownTasks.reverse()) await task().catch(() => undefined);
    await storage.close();
    throw error;
  }
}

/** A semantic cache policy names an embedding model of the catalog (docs/caching.md#semantic-mode); else start-up stops naming the field. */
function checkSemanticPolicies(policies: readonly CachePolicy[], catalog: Pick<Catalog, 'resolve'>): void {
  for (const [index, policy] of policies.entries()) {
    if (policy.mode !== 'semantic') continue;
    const field = `cache[${index}].semantic.embeddingModel`;
    const model = policy.semantic?.embeddingModel;
    if (model === undefined) throw new ConfigError(`invalid setting ${field}: cache policy ${policy.name} has mode semantic and needs an embedding model of the catalog`);
    try {
      catalog.resolve(model, { mode: 'embedding', param: field });
    } catch (error) {
      if (isGatewayError(error)) throw new ConfigError(`invalid setting ${field}: "${model}" is not an embedding model of the catalog`);
      throw error;
    }
  }
}
