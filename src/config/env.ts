import { VENDOR_PROVIDERS, type SettingKind } from '../providers/index.js';

/**
 * Environment twins of config-file settings (docs/configuration.md). The table is also the source of
 * the settings list in docs/configuration.md; keep the two together.
 */
export type { SettingKind };

export interface EnvironmentSetting {
  /** Variables read in order; the first one set wins. */
  variables: readonly string[];
  /** Path of the setting in the config file. */
  path: string;
  kind: SettingKind;
}

export const ENVIRONMENT_SETTINGS: readonly EnvironmentSetting[] = [
  { variables: ['MODELGATE_HOST'], path: 'server.host', kind: 'string' },
  { variables: ['MODELGATE_PORT', 'PORT'], path: 'server.port', kind: 'integer' },
  { variables: ['MODELGATE_WORKERS'], path: 'server.workers', kind: 'integer' },
  { variables: ['MODELGATE_PUBLIC_URL'], path: 'server.publicUrl', kind: 'string' },
  { variables: ['MODELGATE_LOG_LEVEL'], path: 'server.logLevel', kind: 'string' },
  { variables: ['MODELGATE_DATA_DIR'], path: 'dataDir', kind: 'string' },
  { variables: ['DATABASE_URL'], path: 'databaseUrl', kind: 'string' },
  { variables: ['MODELGATE_DATABASE_STATEMENT_TIMEOUT_MS'], path: 'database.statementTimeoutMs', kind: 'integer' },
  { variables: ['REDIS_URL'], path: 'redisUrl', kind: 'string' },
  { variables: ['MODELGATE_REDIS_KEY_PREFIX'], path: 'limits.redisKeyPrefix', kind: 'string' },
  { variables: ['MODELGATE_LIMITS_OUTAGE_INSTANCES'], path: 'limits.outageInstances', kind: 'integer' },
  { variables: ['MODELGATE_ENCRYPTION_KEY'], path: 'encryptionKey', kind: 'string' },
  { variables: ['MODELGATE_ADMIN_TOKEN'], path: 'adminToken', kind: 'string' },
  { variables: ['MODELGATE_REQUIRE_KEYS'], path: 'requireKeys', kind: 'boolean' },
  // Each vendor's own variables, as its descriptor declares them (src/providers/).
  ...VENDOR_PROVIDERS.flatMap((vendor): EnvironmentSetting[] =>
    vendor.environment.map((setting) => ({ variables: setting.variables, path: `providers.${vendor.name}.${setting.field}`, kind: setting.kind })),
  ),
  { variables: ['MODELGATE_AGENT_HTTP_ALLOWLIST'], path: 'agents.httpAllowlist', kind: 'list' },
  { variables: ['MODELGATE_AGENT_HTTP_ALLOW_ADDRESSES'], path: 'agents.httpAllowAddresses', kind: 'list' },
  { variables: ['MODELGATE_MCP_ALLOW_ADDRESSES'], path: 'mcp.allowAddresses', kind: 'list' },
  { variables: ['MODELGATE_LOG_PAYLOADS'], path: 'logs.payloads', kind: 'boolean' },
  { variables: ['MODELGATE_LOG_RETENTION_DAYS'], path: 'logs.retentionDays', kind: 'integer' },
  { variables: ['MODELGATE_LOG_MAX_SIZE_MB'], path: 'logs.maxSizeMb', kind: 'integer' },
  { variables: ['MODELGATE_AUDIT_RETENTION_DAYS'], path: 'audit.retentionDays', kind: 'integer' },
  { variables: ['MODELGATE_LOG_QUEUE_MAX_BYTES'], path: 'logs.queueMaxBytes', kind: 'integer' },
  { variables: ['MODELGATE_LOG_UNAUTHENTICATED_SUMMARY_MS'], path: 'logs.unauthenticatedSummaryMs', kind: 'integer' },
  { variables: ['MODELGATE_UPSTREAM_TIMEOUT_MS'], path: 'upstream.timeoutMs', kind: 'integer' },
  { variables: ['MODELGATE_STREAM_IDLE_TIMEOUT_MS'], path: 'upstream.streamIdleTimeoutMs', kind: 'integer' },
  { variables: ['OTEL_EXPORTER_OTLP_ENDPOINT'], path: 'telemetry.otlpEndpoint', kind: 'string' },
  { variables: ['OTEL_SERVICE_NAME'], path: 'telemetry.serviceName', kind: 'string' },
];
