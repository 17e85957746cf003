import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { providerSecrets } from '../providers/index.js';
import type { GatewayConfig } from './schema.js';
import { ConfigError } from './load.js';

export interface GatewaySecrets {
  /** 32-byte AES key for `enc::` values and its id (first 8 hex of its SHA-256). */
  encryptionKey: Buffer;
  previousEncryptionKeys: Buffer[];
  adminToken: string;
  /** Where a generated admin token lives, for the start-up message; undefined when given by the operator. */
  adminTokenFile: string | undefined;
}

function decodeKey(value: string, field: string): Buffer {
  const key = Buffer.from(value.trim(), 'base64');
  if (key.length !== 32) throw new ConfigError(`invalid setting ${field}: must be 32 bytes encoded as base64`);
  return key;
}

/** Reads a secret file from the data dir, creating it (mode 0600) with `create()` the first time. */
function readOrCreate(path: string, create: () => string): string {
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const value = create();
  writeFileSync(path, `${value}\n`, { mode: 0o600, flag: 'wx' });
  return value;
}

/**
 * Resolves the secrets the gateway needs. Given values are used as they are and never written
 * to disk; missing ones are generated once into the data dir (embedded mode) so a laptop
 * install needs no set-up.
 */
export function resolveSecrets(config: GatewayConfig): GatewaySecrets {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const encryptionKey =
    config.encryptionKey !== undefined
      ? decodeKey(config.encryptionKey, 'encryptionKey')
      : decodeKey(readOrCreate(join(config.dataDir, 'encryption.key'), () => randomBytes(32).toString('base64')), 'encryptionKey');
  const previousEncryptionKeys = Object.entries(config.previousEncryptionKeys).map(([name, value]) =>
    decodeKey(value, `previousEncryptionKeys.${name}`),
  );
  if (config.adminToken !== undefined) {
    return { encryptionKey, previousEncryptionKeys, adminToken: config.adminToken, adminTokenFile: undefined };
  }
  const adminTokenFile = join(config.dataDir, 'admin-token');
  const adminToken = readOrCreate(adminTokenFile, () => `mg-admin-${randomBytes(24).toString('base64url')}`);
  return { encryptionKey, previousEncryptionKeys, adminToken, adminTokenFile };
}

/** Reads the admin token the way the CLI does: environment first, then the data dir. */
export function findAdminToken(env: NodeJS.ProcessEnv, dataDir: string): string | undefined {
  if (env.MODELGATE_ADMIN_TOKEN) return env.MODELGATE_ADMIN_TOKEN;
  const path = join(dataDir, 'admin-token');
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined;
}

/** The password of a connection URL, when it has one. */
function passwordOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password.length > 0 ? password : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every credential the gateway holds, for redaction by value (a provider echoing its key in an
 * error message, a storage error quoting its URL).
 */
export function configuredCredentials(config: GatewayConfig, secrets: GatewaySecrets): string[] {
  const values = [
    ...providerSecrets(config),
    secrets.adminToken,
    secrets.encryptionKey.toString('base64'),
    ...secrets.previousEncryptionKeys.map((key) => key.toString('base64')),
    config.agents.mediaStore.s3SecretAccessKey,
    passwordOf(config.databaseUrl),
    passwordOf(config.redisUrl),
  ];
  return values.filter((value): value is string => value !== undefined);
}
