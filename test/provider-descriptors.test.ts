import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigSchema, ENVIRONMENT_SETTINGS, configuredCredentials, loadConfig, type GatewaySecrets } from '../src/config/index.js';
import { existsSync } from 'node:fs';
import { Catalog, DEFAULT_CATALOG } from '../src/catalog/index.js';
import { createProviders, missingCredentials, ProviderSettingsError, shippedModels, VENDOR_PROVIDERS } from '../src/providers/index.js';

/**
 * A vendor is one folder in src/providers/ and one line in src/providers/vendors.ts
 * (docs/providers.md): the config file, the environment, redaction, start-up and the catalog
 * read the list, and no other code names a vendor.
 */

/** A directory without a config file, so only defaults and the given environment count. */
const cwd = mkdtempSync(join(tmpdir(), 'modelgate-descriptors-'));
const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** Files outside src/providers/ that may name a vendor, and why. */
const MAY_NAME_VENDORS: Record<string, string> = {
  'catalog/default-catalog.ts': 'the shipped catalog data: the models each vendor owns',
  'redaction/secret-patterns.ts': 'key shapes by issuer: any vendor\'s key is redacted from any text, provider or not',
  'server/routes/docs-metadata.ts': "client code samples: the 'openai' package is a client of the gateway's API",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The adapter folders of src/providers/ (every folder but the shared code). */
function adapterFolderNames(): string[] {
  return readdirSync(join(SRC, 'providers'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'shared')
    .map((entry) => entry.name);
}

const secrets: GatewaySecrets = { encryptionKey: Buffer.alloc(32, 1), previousEncryptionKeys: [], adminToken: 'mg-admin-token-for-test', adminTokenFile: undefined };
const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The default base URL of a vendor's settings, when its schema has one (a cloud's depends on its region). */
function defaultHost(vendor: (typeof VENDOR_PROVIDERS)[number]): string[] {
  const baseUrl = (vendor.settings.properties as Record<string, { default?: unknown }>).baseUrl?.default;
  return typeof baseUrl === 'string' ? [new URL(baseUrl).host] : [];
}

/** Every variable of every vendor set to a value of its own: secrets as `secret-<variable>`, the others as what their kind takes. */
function fullEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const vendor of VENDOR_PROVIDERS) {
    for (const setting of vendor.environment) {
      const variable = setting.variables[0]!;
      const schema = (vendor.settings.properties as Record<string, { pattern?: string; enum?: unknown[]; anyOf?: { const?: unknown }[] }>)[setting.field];
      const choice = schema?.anyOf?.[0]?.const;
      env[variable] =
        setting.kind === 'boolean' ? 'true' : setting.kind === 'integer' ? '1' : schema?.pattern?.startsWith('^https?') === true ? 'http://127.0.0.1:9/v9' : typeof choice === 'string' ? choice : `secret-${variable.toLowerCase().replaceAll('_', '-')}-0123456789`;
    }
  }
  return env;
}

test('no code outside src/providers/ names a vendor: its name, owner, environment variables or host', () => {
  const words = VENDOR_PROVIDERS.flatMap((vendor) => [vendor.name, vendor.owner]);
  const quoted = new RegExp(`(['"\`])(${words.join('|')})\\1`);
  const vendorTokens = new RegExp(
    [...new Set(VENDOR_PROVIDERS.flatMap((vendor) => [...vendor.environment.flatMap((setting) => setting.variables), ...defaultHost(vendor)]))]
      .map((token) => `\\b${token.replaceAll('.', '\\.')}\\b`)
      .join('|'),
  );
  const adapterFolders = adapterFolderNames();
  const adapterImport = new RegExp(`providers/(${adapterFolders.join('|')})/`);
  const offenders: string[] = [];
  for (const path of sourceFiles(SRC)) {
    const file = relative(SRC, path);
    if (file.startsWith('providers/') || MAY_NAME_VENDORS[file] !== undefined) continue;
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((line, index) => {
        if (quoted.test(line) || vendorTokens.test(line) || adapterImport.test(line)) offenders.push(`src/${file}:${index + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(offenders, [], 'name vendors only in src/providers/ (their descriptors), never in other code');
});

test('every adapter folder exports its descriptors, each in the list, and every listed one comes from a folder', async () => {
  const listed: readonly unknown[] = VENDOR_PROVIDERS;
  const found = new Set<unknown>();
  for (const folder of adapterFolderNames()) {
    const exported = Object.values((await import(`../src/providers/${folder}/index.js`)) as Record<string, unknown>);
    const descriptors = exported.filter((value) => listed.includes(value));
    assert.ok(descriptors.length >= 1, `src/providers/${folder}/index.ts exports its descriptor, listed in VENDOR_PROVIDERS (src/providers/vendors.ts)`);
    for (const descriptor of descriptors) found.add(descriptor);
  }
  assert.equal(found.size, VENDOR_PROVIDERS.length);
  assert.equal(new Set(VENDOR_PROVIDERS.map((vendor) => vendor.name)).size, VENDOR_PROVIDERS.length, 'names are unique');
});

test("each listed vendor's settings are its own schema in the config, with their environment twins", () => {
  const providers = ConfigSchema.properties.providers.properties as Record<string, unknown>;
  for (const vendor of VENDOR_PROVIDERS) {
    assert.equal(providers[vendor.name], vendor.settings, vendor.name);
    const fields = Object.keys(vendor.settings.properties);
    assert.ok(fields.includes(vendor.credentialField), `${vendor.name}.credentialField`);
    for (const field of vendor.secretFields) assert.ok(fields.includes(field), `${vendor.name}: secret ${field} is a setting`);
    for (const setting of vendor.environment) {
      assert.ok(fields.includes(setting.field), `${vendor.name}: ${setting.field} is a setting`);
      const twin = ENVIRONMENT_SETTINGS.find((candidate) => candidate.path === `providers.${vendor.name}.${setting.field}`);
      assert.deepEqual(twin?.variables, setting.variables, `${vendor.name}.${setting.field}`);
    }
  }
  const config = loadConfig({ env: fullEnvironment(), cwd });
  for (const vendor of VENDOR_PROVIDERS) {
    for (const setting of vendor.environment) {
      assert.notEqual((config.providers[vendor.name] as Record<string, unknown>)[setting.field], undefined, `${setting.variables[0]} sets providers.${vendor.name}.${setting.field}`);
    }
  }
});

test("each listed vendor's secrets are redacted by value, and what it lacks is named", () => {
  const env = fullEnvironment();
  const config = loadConfig({ env, cwd });
  const credentials = configuredCredentials(config, secrets);
  for (const vendor of VENDOR_PROVIDERS) {
    for (const setting of vendor.environment.filter((candidate) => (vendor.secretFields as readonly string[]).includes(candidate.field))) {
      assert.ok(credentials.includes(env[setting.variables[0]!]!), `${vendor.name}: ${setting.field}`);
    }
  }
  assert.deepEqual([...missingCredentials(config).keys()], [], 'every vendor with all its variables set can be called');
  const missing = missingCredentials(loadConfig({ env: {}, cwd }));
  for (const [name, lacking] of missing) {
    const vendor = VENDOR_PROVIDERS.find((candidate) => candidate.name === name)!;
    assert.ok(lacking.setting.startsWith(`providers.${name}.`), lacking.setting);
    const variables = vendor.environment.flatMap((setting) => setting.variables);
    assert.ok(variables.some((variable) => lacking.variable.includes(variable)), `${name}: "${lacking.variable}" names one of its variables`);
  }
});

test('start-up builds every listed vendor (and its routing variants), and the shipped catalog names only listed ones', () => {
  const config = loadConfig({ env: fullEnvironment(), cwd });
  const { providers, variants } = createProviders(config);
  assert.deepEqual(providers.map((provider) => provider.name), VENDOR_PROVIDERS.map((vendor) => vendor.name));
  for (const vendor of VENDOR_PROVIDERS) {
    assert.equal(variants(vendor.name, { credential: 'other-key-0123456789' })?.name, vendor.name);
    assert.throws(() => variants(vendor.name, { settings: { noSuchSetting: 1 } }), ProviderSettingsError);
    for (const field of vendor.secretFields) assert.throws(() => variants(vendor.name, { settings: { [field]: 'in-yaml' } }), /secretsEnv/);
  }
  assert.equal(variants('no-such-provider', {}), undefined);
  const names = new Set<string>(VENDOR_PROVIDERS.map((vendor) => vendor.name));
  for (const model of DEFAULT_CATALOG.models) assert.ok(names.has(model.provider), `${model.id}: ${model.provider}`);
  const catalog = new Catalog(DEFAULT_CATALOG, config, names);
  assert.ok(catalog.list().length > 0);
  for (const entry of shippedModels(config.providers)) {
    for (const model of entry.models) assert.equal(catalog.get(model.id)?.provider, entry.provider, `${model.id} is served by ${entry.provider}`);
  }
});

/*
 * docs/providers.md's "Adding a provider" checklist, held for every adapter folder: its row in
 * the table at the top of the page, its own page, its conformance run, its recorded fixtures.
 */
test("docs/providers.md's checklist holds for every adapter folder", () => {
  const page = readFileSync(join(ROOT, 'docs/providers.md'), 'utf8');
  const tests = readdirSync(join(ROOT, 'test')).filter((file) => file.startsWith('providers-') && file.endsWith('.test.ts'));
  for (const folder of adapterFolderNames()) {
    const row = page.split('\n').find((line) => line.startsWith('|') && line.includes(`\`src/providers/${folder}/\``));
    assert.ok(row !== undefined, `docs/providers.md's table has a row for src/providers/${folder}/`);
    const link = /\((providers-[a-z0-9-]+\.md)\)/.exec(row)?.[1];
    assert.ok(row.includes('this page') || (link !== undefined && existsSync(join(ROOT, 'docs', link))), `the row of ${folder} links its page: ${row}`);
    const runs = tests.filter((file) => file.startsWith(`providers-${folder}`) && readFileSync(join(ROOT, 'test', file), 'utf8').includes('runProviderConformance('));
    assert.ok(runs.length > 0, `test/providers-${folder}*.test.ts runs the conformance suite`);
    assert.ok(existsSync(join(ROOT, 'test/fixtures/providers', folder)), `test/fixtures/providers/${folder}/ holds its recorded bodies`);
  }
});
