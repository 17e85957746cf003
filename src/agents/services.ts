import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Catalog } from '../catalog/index.js';
import { ConfigError, type GatewayConfig } from '../config/index.js';
import type { Database } from '../storage/index.js';
import { AgentRunner } from './agent-runner.js';
import { AgentAuthoring } from './authoring.js';
import { AddressPolicy, AddressPolicyError } from '../network/index.js';
import { AllowlistError, HostAllowlist } from './http/allowlist.js';
import { HttpNodeClient } from './http/client.js';
import { FilesystemMediaStore, type MediaStore } from './media/media-store.js';
import { S3MediaStore } from './media/s3-media-store.js';
import { AgentStore } from './store/agent-store.js';
import { AssetRecords } from './store/asset-records.js';
import { ConversationStore } from './store/conversation-store.js';
import type { AgentTools } from './runtime/types.js';

export interface AgentServiceParts {
  config: GatewayConfig;
  db: Kysely<Database>;
  catalog: Catalog;
  logger: Logger;
  /** The gateway's MCP tools, for llm nodes with `tools`. */
  tools?: AgentTools;
}

export interface AgentServices {
  agents: AgentStore;
  authoring: AgentAuthoring;
  runner: AgentRunner;
  assets: AssetRecords;
  conversations: ConversationStore;
  mediaStore: MediaStore;
  close(): Promise<void>;
}

function createMediaStore(config: GatewayConfig): MediaStore {
  const settings = config.agents.mediaStore;
  if (settings.kind === 'filesystem') return new FilesystemMediaStore(join(config.dataDir, 'assets'));
  const required = (field: 's3Bucket' | 's3AccessKeyId' | 's3SecretAccessKey'): string => {
    const value = settings[field];
    if (value === undefined || value.length === 0) throw new ConfigError(`invalid setting agents.mediaStore.${field}: required when agents.mediaStore.kind is s3`);
    return value;
  };
  const region = settings.s3Region ?? 'us-east-1';
  return new S3MediaStore({
    endpoint: settings.s3Endpoint ?? `https://s3.${region}.amazonaws.com`,
    bucket: required('s3Bucket'),
    region,
    accessKeyId: required('s3AccessKeyId'),
    secretAccessKey: required('s3SecretAccessKey'),
  });
}

/** Builds the agent services from the gateway's parts; a bad agents.* setting stops start-up. */
export function createAgentServices(parts: AgentServiceParts): AgentServices {
  const { config } = parts;
  let allowlist: HostAllowlist;
  let policy: AddressPolicy;
  try {
    allowlist = new HostAllowlist(config.agents.httpAllowlist);
    policy = new AddressPolicy(config.agents.httpAllowAddresses, 'agents.httpAllowAddresses');
  } catch (error) {
    if (error instanceof AllowlistError || error instanceof AddressPolicyError) throw new ConfigError(`invalid setting ${error.message}`);
    throw error;
  }
  const http = new HttpNodeClient({
    allowlist,
    policy,
    timeoutMs: config.agents.httpTimeoutMs,
    maxResponseBytes: config.agents.httpMaxResponseBytes,
    logger: parts.logger,
  });
  const mediaStore = createMediaStore(config);
  const agents = new AgentStore(parts.db);
  const conversations = new ConversationStore(parts.db);
  const runner = new AgentRunner({ db: parts.db, conversations, catalog: parts.catalog, config: config.agents, mediaStore, http, httpAllowlist: allowlist, ...(parts.tools === undefined ? {} : { tools: parts.tools }) });
  return {
    agents,
    authoring: new AgentAuthoring(agents, runner.environment),
    runner,
    assets: new AssetRecords(parts.db),
    conversations,
    mediaStore,
    close: () => http.close(),
  };
}
