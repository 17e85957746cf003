import { Type, type Static } from '@sinclair/typebox';
import { CompatibleProviderSchema, VENDOR_PROVIDERS, vendorSettingsSchemas } from '../providers/index.js';
import { ModelOverrideSchema, type ModelMode, type ModelOverride } from '../model-api/index.js';
import { GuardrailSchema } from '../guardrails/index.js';
import { CachePolicySchema } from '../cache/index.js';

/**
 * The whole configuration, one schema. Every setting has a config-file name (the path in
 * this schema) and, where docs/configuration.md lists one, an environment twin (see env.ts).
 */
const PositiveInt = (def: number, description: string) =>
  Type.Integer({ minimum: 1, default: def, description });

/**
 * The longest delay a Node timer can wait (2^31 - 1 ms, about 24.8 days). Node runs a longer
 * one after 1 ms instead, so a larger "effectively never" would make the timer fire at once.
 */
export type { ModelMode, ModelOverride };
export type { CompatibleProviderConfig } from '../providers/index.js';

export const MAX_TIMER_MS = 2_147_483_647;

/** A delay for a timer: durations added together can pass what one timer can wait. */
export function timerDelay(ms: number): number {
  return Math.min(ms, MAX_TIMER_MS);
}

/** A duration in milliseconds that a timer waits for. */
const Milliseconds = (def: number, description: string, minimum = 1) =>
  Type.Integer({ minimum, maximum: MAX_TIMER_MS, default: def, description });

/** The error classes a fallback can be limited to (docs/routing.md). */
const FAILURE_CLASSES = ['rate_limit', 'server_error', 'timeout', 'connection', 'context_window_exceeded', 'content_policy'] as const;
/** What a fallback answers when fallbackOn is not given: the failures another deployment or model may not have. */
const DEFAULT_FALLBACK_ON = ['rate_limit', 'server_error', 'timeout', 'connection'] as const;

/** The name of an environment variable. */
const ENV_NAME = '^[A-Za-z_][A-Za-z0-9_]*$';

/** One way to reach a routed model: a provider, optionally with its own credential, base URL or upstream id. */
export const DeploymentSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$', description: 'shown in the log and metrics; default provider or provider#N' })),
    provider: Type.String({ minLength: 1, description: `a provider of the gateway (${VENDOR_PROVIDERS.map((vendor) => vendor.name).join(', ')} or providers.compatible[].name)` }),
    apiKeyEnv: Type.Optional(Type.String({ pattern: ENV_NAME, description: 'environment variable holding this deployment\'s credential' })),
    baseUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
    settings: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'settings of the provider (as under providers.<name>: region, location, apiVersion, …) this deployment changes; never a secret' }),
    ),
    secretsEnv: Type.Optional(
      Type.Record(Type.String(), Type.String({ pattern: ENV_NAME }), { description: 'secret settings of the provider, each read from the environment variable named' }),
    ),
    upstreamId: Type.Optional(Type.String({ minLength: 1, description: 'the model id sent to this deployment' })),
    weight: Type.Number({ exclusiveMinimum: 0, default: 1, description: 'share of the traffic among the healthy deployments' }),
    rpm: Type.Optional(Type.Integer({ minimum: 1, description: 'requests per minute this deployment takes (counted per instance)' })),
    tpm: Type.Optional(Type.Integer({ minimum: 1, description: 'estimated tokens per minute this deployment takes (counted per instance)' })),
  },
  { additionalProperties: false },
);

/** How one model or alias is served: deployments, retries, fallbacks, cooldown and timeouts (docs/routing.md). */
export const RoutingEntrySchema = Type.Object(
  {
    model: Type.String({ minLength: 1, description: 'a catalog id or alias' }),
    deployments: Type.Array(DeploymentSchema, { default: [], description: 'default: the model\'s own provider, weight 1' }),
    strategy: Type.Union([Type.Literal('weighted'), Type.Literal('latency')], {
      default: 'weighted',
      description: 'weighted: weights are traffic shares; latency: weights scaled by recent latency and the rate limit left',
    }),
    retries: Type.Integer({ minimum: 0, maximum: 10, default: 0, description: 'further attempts after a retryable failure' }),
    maxRetryWaitMs: Milliseconds(5_000, "longest provider Retry-After waited for before the retry on the same deployment; a longer one cools it down", 0),
    backoffMs: Milliseconds(200, 'first wait before a retry, doubled each time, with jitter', 0),
    fallbacks: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'models tried in order when retries are spent' }),
    fallbackOn: Type.Array(Type.Union(FAILURE_CLASSES.map((name) => Type.Literal(name))), { default: [...DEFAULT_FALLBACK_ON] }),
    cooldown: Type.Object(
      {
        failures: Type.Integer({ minimum: 1, default: 3, description: 'retryable failures within windowMs that cool a deployment down' }),
        windowMs: Milliseconds(60_000, 'window the failures are counted in'),
        durationMs: Milliseconds(30_000, 'how long a cooled-down deployment is skipped'),
      },
      { additionalProperties: false, default: {} },
    ),
    timeouts: Type.Object(
      {
        firstByteMs: Type.Optional(Milliseconds(60_000, 'longest one attempt may take to begin its answer (a stream\'s first frame)')),
        totalMs: Type.Optional(Milliseconds(600_000, 'longest the attempts together may take before an answer begins')),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** An environment variable's name: where a value of the config comes from, so no secret is written in YAML. */
const EnvName = (description: string) => Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description });

/** A value read from the environment at start-up: `{ env: NAME }` (docs/mcp.md). */
const FromEnvironment = Type.Object({ env: EnvName('the environment variable holding the value') }, { additionalProperties: false });

/** One upstream MCP server (decisions §12, docs/mcp.md): Streamable HTTP `url` or a stdio `command`. */
export const McpServerSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9_-]+$', maxLength: 64, description: 'unique; its tools are exposed as <name>__<tool>' }),
    url: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$', description: 'Streamable HTTP endpoint of the server' })),
    command: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'program and arguments of a stdio server' })),
    env: Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), FromEnvironment, { default: {}, description: 'environment of a stdio server, each value from a variable of the gateway' }),
    headers: Type.Record(Type.String({ pattern: '^[A-Za-z0-9!#$%&\'*+.^_`|~-]+$' }), FromEnvironment, { default: {}, description: 'HTTP headers sent to the server, each value from an environment variable' }),
    tokenEnv: Type.Optional(EnvName('environment variable holding a static bearer token')),
    oauth: Type.Optional(
      Type.Object(
        {
          tokenUrl: Type.String({ pattern: '^https?://[^\\s]+$', description: 'token endpoint of the authorization server' }),
          clientIdEnv: EnvName('environment variable holding the client id'),
          clientSecretEnv: EnvName('environment variable holding the client secret'),
          scope: Type.Optional(Type.String({ minLength: 1 })),
        },
        { additionalProperties: false, description: 'OAuth 2.1 client credentials grant' },
      ),
    ),
    timeoutMs: Milliseconds(30_000, 'longest wait for one answer of the server (connect, list, call)'),
  },
  { additionalProperties: false },
);

const GrantedIds = (what: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { default: [], description: `${what} the project's keys may name on native pass-through; "*" = any` });

/** What a project may do beyond its keys' own settings (docs/limits.md, docs/security.md): read on every call, so kept in the config. */
export const ProjectPolicySchema = Type.Object(
  {
    allowUnpriced: Type.Boolean({ default: false, description: 'keys of the project with a monthly cost cap may use models the gateway cannot price' }),
    hashEndUsers: Type.Boolean({ default: false, description: 'keep end users\' ids in the request log as an HMAC, not as the requests name them' }),
    upstreamObjects: Type.Object(
      {
        conversations: GrantedIds('conversation ids (Responses `conversation`)'),
        prompts: GrantedIds('stored prompt ids (Responses `prompt.id`)'),
        items: GrantedIds('item ids (`item_reference`) of the vendor account'),
        vectorStores: GrantedIds('vector store ids (`file_search.vector_store_ids`)'),
        files: GrantedIds('uploaded file ids (`file_id`, Anthropic `file` sources)'),
        containers: GrantedIds('container ids (code interpreter / Anthropic `container`)'),
        cachedContents: GrantedIds('context cache names (Gemini API `cachedContent`)'),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false, default: {} },
);

export const ConfigSchema = Type.Object(
  {
    server: Type.Object(
      {
        host: Type.String({ minLength: 1, default: '127.0.0.1' }),
        port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
        workers: Type.Integer({ minimum: 0, default: 0, description: '0 = one per core with Redis, else 1' }),
        bodyLimitBytes: PositiveInt(20 * 1024 * 1024, 'largest JSON body on model endpoints'),
        shutdownGraceMs: Milliseconds(10_000, 'how long a graceful shutdown waits for in-flight requests'),
        requestTimeoutMs: Milliseconds(300_000, 'longest time to receive a whole request from a client; 0 = no limit', 0),
        clientStallTimeoutMs: Milliseconds(60_000, 'longest a client may leave a response unread (bytes waiting, none taken) before its connection is closed'),
        trustProxy: Type.Boolean({ default: false }),
        publicUrl: Type.Optional(
          Type.String({
            pattern: '^https?://[^\\s/?#@]+(/[^\\s?#]*)?$',
            description: 'the base URL clients reach the gateway at (http or https, host, optional path; no query or credentials)',
          }),
        ),
        logLevel: Type.Union(
          ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
          { default: 'info' },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    dataDir: Type.String({ minLength: 1, default: './.modelgate' }),
    databaseUrl: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
    database: Type.Object(
      {
        statementTimeoutMs: Milliseconds(15_000, 'longest time one PostgreSQL statement may run; 0 = no limit', 0),
      },
      { additionalProperties: false, default: {} },
    ),
    redisUrl: Type.Optional(Type.String({ pattern: '^rediss?://' })),
    encryptionKey: Type.Optional(Type.String({ minLength: 1 })),
    /** Keys of earlier rotations: `{ keyId: base64 }`; old `enc::` values keep decrypting. */
    previousEncryptionKeys: Type.Record(Type.String(), Type.String(), { default: {} }),
    adminToken: Type.Optional(Type.String({ minLength: 16 })),
    requireKeys: Type.Boolean({ default: true }),
    providers: Type.Object(
      {
        ...vendorSettingsSchemas(),
        compatible: Type.Array(CompatibleProviderSchema, { default: [] }),
      },
      { additionalProperties: false, default: {} },
    ),
    upstream: Type.Object(
      {
        timeoutMs: Milliseconds(60_000, 'longest time, from the start of a call (pool wait included), for a whole answer or a stream\'s headers'),
        streamIdleTimeoutMs: Milliseconds(60_000, 'longest gap between two events of a provider stream (comments do not count)'),
        connectionsPerOrigin: PositiveInt(128, 'pooled keep-alive connections per upstream origin'),
      },
      { additionalProperties: false, default: {} },
    ),
    telemetry: Type.Object(
      {
        otlpEndpoint: Type.Optional(
          Type.String({ pattern: '^https?://[^\\s?#]+$', description: 'base URL of an OTLP/HTTP collector; traces go to <otlpEndpoint>/v1/traces; unset = no tracing' }),
        ),
        serviceName: Type.String({ minLength: 1, default: 'modelgate', description: 'service.name of the exported spans' }),
      },
      { additionalProperties: false, default: {} },
    ),
    catalog: Type.Object(
      {
        defaultModel: Type.Optional(Type.String({ minLength: 1 })),
        models: Type.Array(ModelOverrideSchema, { default: [] }),
        aliases: Type.Record(Type.String(), Type.String(), { default: {} }),
        serviceAliases: Type.Record(Type.String({ pattern: '^service-[1-5]$' }), Type.String(), { default: {} }),
      },
      { additionalProperties: false, default: {} },
    ),
    projects: Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' }), ProjectPolicySchema, { default: {}, description: 'per-project policies, by project id' }),
    routing: Type.Array(RoutingEntrySchema, { default: [], description: 'deployments, retries and fallbacks per model (docs/routing.md)' }),
    cache: Type.Array(CachePolicySchema, { default: [], description: 'response-cache policies, the first that applies to a request is used (docs/caching.md)' }),
    mcp: Type.Object(
      {
        servers: Type.Array(McpServerSchema, { default: [], description: 'upstream MCP servers served at /mcp (docs/mcp.md)' }),
        allowAddresses: Type.Array(Type.String({ minLength: 1 }), {
          default: [],
          description: 'CIDRs MCP server URLs may reach although they are private, loopback or link-local',
        }),
        sessionIdleMs: Milliseconds(30 * 60_000, 'an /mcp session unused this long is closed'),
        maxSessions: PositiveInt(1000, 'open /mcp sessions per instance; the longest unused is closed first'),
      },
      { additionalProperties: false, default: {} },
    ),
    keys: Type.Object(
      {
        cacheRefreshMs: Milliseconds(1000, 'how often an instance re-reads changed keys (pause/revoke propagation)'),
      },
      { additionalProperties: false, default: {} },
    ),
    logs: Type.Object(
      {
        payloads: Type.Boolean({ default: true }),
        retentionDays: Type.Integer({ minimum: 0, default: 30, description: '0 = keep forever' }),
        maxSizeMb: Type.Integer({ minimum: 0, default: 10_240, description: 'size cap of the log in MiB: oldest payloads dropped first, then oldest records (0 = no cap)' }),
        queueSize: PositiveInt(10_000, 'records waiting to be written before new ones are dropped'),
        queueMaxBytes: PositiveInt(64 * 1024 * 1024, 'payload, detail and media characters the queue holds before payloads are shed'),
        batchSize: PositiveInt(100, 'records written per batch'),
        flushIntervalMs: Milliseconds(200, 'longest time a record waits in the queue'),
        unauthenticatedSummaryMs: Milliseconds(60_000, 'refused unauthenticated requests: one record per client address per interval, with a count (0 = a record each)', 0),
        maxPayloadBytes: PositiveInt(256 * 1024, 'largest request or response payload kept per record; larger ones keep a preview'),
      },
      { additionalProperties: false, default: {} },
    ),
    auth: Type.Object(
      {
        oidc: Type.Optional(
          Type.Object(
            {
              issuer: Type.String({
                pattern: '^https?://[^\\s?#]+$',
                description: "the OpenID provider's issuer URL (its discovery document is <issuer>/.well-known/openid-configuration); https, or http on a loopback address",
              }),
              clientId: Type.String({ minLength: 1, description: 'the client id the provider gave the gateway' }),
              clientSecretEnv: Type.Optional(EnvName('environment variable holding the client secret (unset for a public client, which PKCE alone protects)')),
              providerName: Type.String({ minLength: 1, maxLength: 60, default: 'single sign-on', description: 'shown on the sign-in button: "Sign in with <providerName>"' }),
              scopes: Type.Array(Type.String({ pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+$' }), { default: ['openid', 'email', 'profile'], description: 'scopes asked for; openid is always sent' }),
              roleClaim: Type.String({ minLength: 1, default: 'groups', description: 'the ID token (or userinfo) claim holding the groups the roles map from' }),
              roles: Type.Object(
                {
                  admin: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'groups whose members are administrators' }),
                  viewer: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'groups whose members read the request log and usage' }),
                  teamAdmin: Type.Array(Type.String({ pattern: '\\{team\\}' }), {
                    default: [],
                    description: 'group patterns of team admins, with {team} where the group names the team id (modelgate-{team}-admins)',
                  }),
                },
                { additionalProperties: false, default: {} },
              ),
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    budgets: Type.Object(
      {
        alerts: Type.Object(
          {
            webhooks: Type.Array(
              Type.Object(
                {
                  url: Type.String({ minLength: 1, description: 'https URL the alerts are POSTed to' }),
                  secretEnv: Type.String({ minLength: 1, description: 'environment variable holding the signing key (16 characters or more)' }),
                  format: Type.Union([Type.Literal('json'), Type.Literal('slack')], { default: 'json', description: 'json: the gateway\'s body; slack: a Slack-compatible { text } body' }),
                  allowAddresses: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'CIDRs the webhook may reach although private, loopback or link-local' }),
                  timeoutMs: Milliseconds(10_000, 'longest wait for one delivery'),
                },
                { additionalProperties: false },
              ),
              { default: [], description: 'where budget alerts are delivered (docs/limits.md#alerts)' },
            ),
            retryBaseMs: Milliseconds(30_000, 'wait before the first retry of a failed delivery; each next one waits twice as long'),
            maxAttempts: PositiveInt(6, 'deliveries tried at most per alert'),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    audit: Type.Object(
      {
        retentionDays: Type.Integer({ minimum: 0, default: 365, description: 'audit log entries older than this are deleted (0 = keep forever)' }),
      },
      { additionalProperties: false, default: {} },
    ),
    limits: Type.Object(
      {
        redisKeyPrefix: Type.String({ minLength: 1, default: 'modelgate:limits:', description: 'prefix of the counters in Redis' }),
        redisCommandTimeoutMs: Milliseconds(500, 'longest wait for Redis before this instance enforces limits on its own'),
        redisOutage: Type.Union([Type.Literal('local'), Type.Literal('failClosed')], {
          default: 'local',
          description: 'while Redis is unreachable: local = each instance enforces with its own counters; failClosed = limited keys are refused with 503',
        }),
        outageInstances: Type.Integer({
          minimum: 1,
          default: 1,
          description: 'in local mode, the fewest instances each limit is divided among during a Redis outage (set it to the instances you run: one started during an outage has seen only itself)',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    vetting: Type.Object(
      {
        verificationModel: Type.Optional(Type.String({ minLength: 1 })),
        defaultModel: Type.Optional(Type.String({ minLength: 1 })),
        maxAttemptsLimit: Type.Integer({ minimum: 1, maximum: 20, default: 5 }),
        fallbackMessage: Type.String({
          minLength: 1,
          default:
            "I'm not able to give a reply I can stand behind right now. Let's take it one step at a time: tell me what you have tried so far.",
        }),
        chatSystemPrompt: Type.Optional(Type.String({ minLength: 1 })),
        verificationSystemPrompt: Type.Optional(Type.String({ minLength: 1 })),
      },
      { additionalProperties: false, default: {} },
    ),
    agents: Type.Object(
      {
        httpAllowlist: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
        httpAllowAddresses: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
        maxNodeExecutions: PositiveInt(200, 'node executions per run'),
        maxLoopIterations: PositiveInt(50, 'iterations of any one loop'),
        maxModelCalls: PositiveInt(25, 'model calls per run'),
        maxValueBytes: PositiveInt(1024 * 1024, 'size of any one value'),
        runTimeoutMs: Milliseconds(120_000, 'wall-clock time of a run'),
        httpTimeoutMs: Milliseconds(10_000, 'total time of one http node call'),
        httpMaxResponseBytes: PositiveInt(1024 * 1024, 'http node response size after decompression'),
        mediaStore: Type.Object(
          {
            kind: Type.Union([Type.Literal('filesystem'), Type.Literal('s3')], { default: 'filesystem' }),
            s3Endpoint: Type.Optional(Type.String()),
            s3Bucket: Type.Optional(Type.String()),
            s3Region: Type.Optional(Type.String()),
            s3AccessKeyId: Type.Optional(Type.String()),
            s3SecretAccessKey: Type.Optional(Type.String()),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    guardrails: Type.Array(GuardrailSchema, { default: [], description: 'checks before and after model calls (decisions §13, docs/guardrails.md)' }),
  },
  { additionalProperties: false },
);

export type GatewayConfig = Static<typeof ConfigSchema>;
export type RoutingEntry = Static<typeof RoutingEntrySchema>;
export type DeploymentConfig = Static<typeof DeploymentSchema>;
export type FailureClass = (typeof FAILURE_CLASSES)[number];
export type McpServerConfig = Static<typeof McpServerSchema>;
export type OidcConfig = NonNullable<GatewayConfig['auth']['oidc']>;
export type ProjectPolicyConfig = Static<typeof ProjectPolicySchema>;
