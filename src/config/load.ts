import { readFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { TSchema, TUnion } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { parse as parseYaml } from 'yaml';
import { SECRET_PREFIX } from '../keys/index.js';
import { ConfigSchema, type GatewayConfig } from './schema.js';
import { ENVIRONMENT_SETTINGS, type SettingKind } from './env.js';
import { closestIds } from './closest-names.js';
import { checkMcpServers } from './mcp-servers.js';
import { ConfigError, configErrorOf } from './config-error.js';
import { VENDOR_PROVIDERS } from '../providers/index.js';
import { buildCheck, GuardrailConfigError, parseGuardrails } from '../guardrails/index.js';

export { ConfigError, configErrorOf };

/** Settings given on the command line (they win over everything else). */
export interface CommandLineSettings {
  configPath?: string;
  host?: string;
  port?: number;
  dataDir?: string;
  workers?: number;
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  flags?: CommandLineSettings;
}

type Tree = Record<string, unknown>;

function setPath(tree: Tree, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = tree;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[part] = {};
    node = node[part] as Tree;
  }
  node[parts[parts.length - 1]!] = value;
}

function convert(kind: SettingKind, raw: string, name: string): unknown {
  switch (kind) {
    case 'string':
      return raw;
    case 'integer': {
      if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
      return Number(raw.trim());
    }
    case 'boolean': {
      const value = raw.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(value)) return true;
      if (['false', '0', 'no', 'off'].includes(value)) return false;
      throw new ConfigError(`${name} must be true or false, got "${raw}"`);
    }
    case 'list':
      return raw.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
  }
}

function readConfigFile(path: string, explicit: boolean): Tree {
  if (!existsSync(path)) {
    if (explicit) throw new ConfigError(`config file ${path} does not exist`);
    return {};
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`config file ${path} is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${path} must hold a mapping of settings at the top level`);
  }
  return parsed as Tree;
}

/** The config file start-up reads: `--config`, else MODELGATE_CONFIG, else modelgate.yaml in the working directory. */
function configFileLocation(options: LoadOptions): { path: string; explicit: boolean } {
  const env = options.env ?? process.env;
  // Empty is unset, as for every setting's variable (a compose file passes unset ones empty).
  const explicitPath = options.flags?.configPath ?? (env.MODELGATE_CONFIG === '' ? undefined : env.MODELGATE_CONFIG);
  return { path: resolve(options.cwd ?? process.cwd(), explicitPath ?? 'modelgate.yaml'), explicit: explicitPath !== undefined };
}

/** The config file that `loadConfig` with these options reads, or undefined when there is none (defaults and environment only). */
export function loadedConfigFile(options: LoadOptions = {}): string | undefined {
  const { path } = configFileLocation(options);
  return existsSync(path) ? path : undefined;
}

/**
 * Builds the configuration once at start-up: defaults < config file < environment < flags.
 * The result is validated against ConfigSchema and frozen; any bad value stops start-up with
 * one message naming the field and where it came from. Secret values never appear in messages.
 */
export function loadConfig(options: LoadOptions = {}): GatewayConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const flags = options.flags ?? {};

  const { path: configPath, explicit } = configFileLocation(options);
  const tree = readConfigFile(configPath, explicit);
  const sources = new Map<string, string>();

  for (const setting of ENVIRONMENT_SETTINGS) {
    const name = setting.variables.find((variable) => env[variable] !== undefined && env[variable] !== '');
    if (name === undefined) continue;
    setPath(tree, setting.path, convert(setting.kind, env[name]!, name));
    sources.set(setting.path, `environment variable ${name}`);
  }

  const flagSettings: [string, unknown, string][] = [
    ['server.host', flags.host, '--host'],
    ['server.port', flags.port, '--port'],
    ['dataDir', flags.dataDir, '--data-dir'],
    ['server.workers', flags.workers, '--workers'],
  ];
  for (const [path, value, flag] of flagSettings) {
    if (value === undefined) continue;
    setPath(tree, path, value);
    sources.set(path, `flag ${flag}`);
  }

  const withDefaults = Value.Default(ConfigSchema, Value.Clone(tree));
  const problems = settingProblems(withDefaults, (field) => {
    const topField = [...sources.keys()].find((source) => field === source || field.startsWith(`${source}.`));
    return topField !== undefined ? sources.get(topField)! : `config file ${configPath}`;
  });
  if (problems.length > 0) throw configErrorOf(problems);
  const config = withDefaults as GatewayConfig;
  checkAdminToken(config.adminToken, sources.get('adminToken') ?? `config file ${configPath}`);
  assertProviderNamesUnique(config);
  checkMcpServers(config.mcp.servers);
  checkGuardrails(config, env);
  checkOidc(config, env);
  config.dataDir = resolve(cwd, config.dataDir);
  if (config.server.publicUrl !== undefined) config.server.publicUrl = config.server.publicUrl.replace(/\/+$/, '');
  if (config.databaseUrl !== undefined && config.encryptionKey === undefined) {
    throw new ConfigError(
      'invalid setting encryptionKey: MODELGATE_ENCRYPTION_KEY is required with DATABASE_URL (every instance must share one key)',
    );
  }
  return deepFreeze(config);
}

/** One problem of a value against its schema: the field (dotted, e.g. `providers.openai.baseUrl`) and what is wrong with it. */
export interface SettingProblem {
  field: string;
  reason: string;
}

/**
 * Every problem of `value` against `schema` at once, one per field (a file with three typos is
 * fixed in one go, not in three starts). An unknown field gets the closest known name of its
 * place ("did you mean"). Start-up checks the whole config with it; the admin API a provider's
 * settings against its descriptor's schema.
 */
export function schemaProblems(schema: TSchema, value: unknown): SettingProblem[] {
  const problems = new Map<string, string>();
  for (const error of Value.Errors(schema, value)) {
    const { path, message } = explained(error);
    const field = path.replace(/^\//, '').replaceAll('/', '.') || '(top level)';
    // A union reports itself and its variants: the first word on a field is the clearest.
    if (problems.has(field)) continue;
    const unknownField = error.type === ValueErrorType.ObjectAdditionalProperties || message.includes('Unexpected property');
    problems.set(field, unknownField ? `is not a known setting${suggestionFor(schema, path)}` : message.charAt(0).toLowerCase() + message.slice(1));
  }
  return [...problems].map(([field, reason]) => ({ field, reason }));
}

/** Every problem of the settings, one line each naming the field and where it came from. */
function settingProblems(settings: unknown, originOf: (field: string) => string): string[] {
  return schemaProblems(ConfigSchema, settings).map(({ field, reason }) => `invalid setting ${field} (from ${originOf(field)}): ${reason}`);
}

/** " (did you mean baseUrl?)" for an unknown field: the closest name its object takes, if one is close. */
function suggestionFor(root: TSchema, path: string): string {
  const parts = path.split('/').filter((part) => part.length > 0);
  const name = parts.pop();
  let schema: TSchema | undefined = root;
  for (const part of parts) {
    if (schema === undefined) break;
    schema = /^\d+$/.test(part) && schema.items !== undefined ? (schema.items as TSchema) : (schema.properties as Record<string, TSchema> | undefined)?.[part];
  }
  const known = Object.keys((schema?.properties as Record<string, TSchema> | undefined) ?? {});
  const [closest] = name === undefined ? [] : closestIds(name, known, 1);
  return closest === undefined ? '' : ` (did you mean ${closest}?)`;
}

/**
 * The admin API reads its token from "Authorization: Bearer <token>", which ends at the first
 * space and refuses model keys: a token it could never accept stops start-up instead.
 */
function checkAdminToken(token: string | undefined, origin: string): void {
  if (token === undefined) return;
  let problem: string | undefined;
  if (!/^[\x21-\x7e]+$/.test(token)) {
    problem = 'use visible ASCII characters only, without spaces: the token is sent as "Authorization: Bearer <token>"';
  } else if (token.startsWith(SECRET_PREFIX)) {
    problem = `it must not start with "${SECRET_PREFIX}", the prefix of model API keys, which the admin API refuses`;
  }
  if (problem !== undefined) throw new ConfigError(`invalid setting adminToken (from ${origin}): ${problem}`);
}

/**
 * What is wrong with a value, where. A setting of several kinds (a price or null, one of some
 * words) fails as a whole with "expected union value": say which words it takes, or what is
 * wrong with the value as its own kind (the first that is not null), checked with that kind's
 * defaults so a price with a bad field does not blame the fields left out.
 */
function explained(error: ValueError): { path: string; message: string } {
  if (error.type !== ValueErrorType.Union) return { path: error.path, message: error.message };
  const variants = (error.schema as TUnion).anyOf;
  if (variants.every((variant) => variant.const !== undefined)) {
    return { path: error.path, message: `must be one of ${variants.map((variant) => String(variant.const)).join(', ')}` };
  }
  for (const variant of variants.filter((candidate) => candidate.type !== 'null')) {
    const inner = Value.Errors(variant, Value.Default(variant, Value.Clone(error.value))).First();
    if (inner !== undefined) {
      const found = explained(inner);
      return { path: `${error.path}${found.path}`, message: found.message };
    }
  }
  return { path: error.path, message: error.message };
}

/**
 * A compatible provider named like another provider would silently take its models (one named
 * after a vendor's would serve that vendor's whole catalog).
 */
function assertProviderNamesUnique(config: GatewayConfig): void {
  // A preset (an OpenAI-compatible host the gateway knows) yields to a compatible provider of its name.
  const taken = new Set<string>(VENDOR_PROVIDERS.filter((vendor) => vendor.yieldsToCompatible !== true).map((vendor) => vendor.name));
  for (const [index, { name }] of config.providers.compatible.entries()) {
    if (taken.has(name)) {
      throw new ConfigError(`invalid setting providers.compatible[${index}].name: "${name}" is already the name of a provider; give each provider its own name`);
    }
    taken.add(name);
  }
}

/** What the schema cannot say about `guardrails` (unique names, each check's options, patterns that compile): the first problem stops start-up. */
function checkGuardrails(config: GatewayConfig, env: Readonly<Record<string, string | undefined>>): void {
  try {
    parseGuardrails(config.guardrails, (policy, field) => void buildCheck(policy, field, { env }));
  } catch (error) {
    if (error instanceof GuardrailConfigError) throw new ConfigError(error.message);
    throw error;
  }
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Single sign-on: an issuer over plain http only on this machine (a provider in development
 * or a test); a named client secret variable must be set.
 */
function checkOidc(config: GatewayConfig, env: NodeJS.ProcessEnv): void {
  const oidc = config.auth.oidc;
  if (oidc === undefined) return;
  const issuer = new URL(oidc.issuer);
  if (issuer.protocol === 'http:' && !LOOPBACK_HOSTS.has(issuer.hostname)) {
    throw new ConfigError('invalid setting auth.oidc.issuer: use https; plain http is accepted only for a provider on a loopback address');
  }
  const secretVariable = oidc.clientSecretEnv;
  if (secretVariable !== undefined && (env[secretVariable] ?? '') === '') {
    throw new ConfigError(`invalid setting auth.oidc.clientSecretEnv: the variable ${secretVariable} is not set; set it to the client secret, or leave clientSecretEnv out for a public client`);
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
