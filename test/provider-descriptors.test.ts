import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigSchema, ENVIRONMENT_SETTINGS, configuredCredentials, loadConfig, type GatewaySecrets } from '../src/config/index.js';
import { Catalog, DEFAULT_CATALOG } from '../src/catalog/index.js';
import { createProviders, missingCredentials, VENDOR_PROVIDERS } from '../src/providers/index.js';

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

function configWithKeys(): ReturnType<typeof loadConfig> {
  const env = Object.fromEntries(VENDOR_PROVIDERS.map((vendor) => [vendor.environment.apiKey, `key-of-${vendor.name}-0123456789`]));
  return loadConfig({ env, cwd });
}

test('no code outside src/providers/ names a vendor: its name, owner, environment variables or host', () => {
  const words = VENDOR_PROVIDERS.flatMap((vendor) => [vendor.name, vendor.owner]);
  const quoted = new RegExp(`(['"\`])(${words.join('|')})\\1`);
  const vendorTokens = new RegExp(
    VENDOR_PROVIDERS.flatMap((vendor) => [vendor.environment.apiKey, vendor.environment.baseUrl, new URL(vendor.settings.properties.baseUrl.default as string).host])
      .map((token) => token.replaceAll('.', '\\.'))
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
  assert.ok(adapterFolders.length >= VENDOR_PROVIDERS.length);
});

test('every adapter folder exports one descriptor, and it is in the list', async () => {
  const listed: readonly unknown[] = VENDOR_PROVIDERS;
  for (const folder of adapterFolderNames()) {
    const exported = Object.values(await import(`../src/providers/${folder}/index.js`) as Record<string, unknown>);
    const descriptors = exported.filter((value) => listed.includes(value));
    assert.equal(descriptors.length, 1, `src/providers/${folder}/index.ts exports its descriptor, listed in VENDOR_PROVIDERS (src/providers/vendors.ts)`);
  }
});

test('each listed vendor has its settings, environment twins and default in the config', () => {
  const providers = ConfigSchema.properties.providers.properties as Record<string, { properties?: { baseUrl?: { default?: unknown } } }>;
  const config = loadConfig({ env: {}, cwd });
  for (const vendor of VENDOR_PROVIDERS) {
    assert.equal(providers[vendor.name]?.properties?.baseUrl?.default, vendor.settings.properties.baseUrl.default, vendor.name);
    assert.equal(config.providers[vendor.name].baseUrl, vendor.settings.properties.baseUrl.default, vendor.name);
    for (const [field, variable] of [['apiKey', vendor.environment.apiKey], ['baseUrl', vendor.environment.baseUrl]] as const) {
      const setting = ENVIRONMENT_SETTINGS.find((candidate) => candidate.path === `providers.${vendor.name}.${field}`);
      assert.deepEqual(setting?.variables, [variable], `${vendor.name}.${field}`);
    }
  }
  const fromEnvironment = loadConfig({ env: { [VENDOR_PROVIDERS[0].environment.baseUrl]: 'http://127.0.0.1:9/v9' }, cwd });
  assert.equal(fromEnvironment.providers[VENDOR_PROVIDERS[0].name].baseUrl, 'http://127.0.0.1:9/v9');
});

test("each listed vendor's key is redacted by value, and named when missing", () => {
  const config = configWithKeys();
  const credentials = configuredCredentials(config, secrets);
  for (const vendor of VENDOR_PROVIDERS) assert.ok(credentials.includes(`key-of-${vendor.name}-0123456789`), vendor.name);
  assert.equal(missingCredentials(config).size, 0);
  const missing = missingCredentials(loadConfig({ env: {}, cwd }));
  for (const vendor of VENDOR_PROVIDERS) {
    assert.deepEqual(missing.get(vendor.name), { variable: vendor.environment.apiKey, setting: `providers.${vendor.name}.apiKey` });
  }
});

test('start-up builds every listed vendor (and its routing variants), and the shipped catalog names only listed ones', () => {
  const config = configWithKeys();
  const { providers, variants } = createProviders(config);
  assert.deepEqual(providers.map((provider) => provider.name), VENDOR_PROVIDERS.map((vendor) => vendor.name));
  for (const vendor of VENDOR_PROVIDERS) {
    assert.equal(variants(vendor.name, { apiKey: 'other-key', baseUrl: 'http://127.0.0.1:9' })?.name, vendor.name);
  }
  assert.equal(variants('no-such-provider', {}), undefined);
  const names = new Set<string>(VENDOR_PROVIDERS.map((vendor) => vendor.name));
  const owners = new Set<string>(VENDOR_PROVIDERS.map((vendor) => vendor.owner));
  for (const model of DEFAULT_CATALOG.models) {
    assert.ok(names.has(model.provider), `${model.id}: ${model.provider}`);
    assert.ok(owners.has(model.ownedBy), `${model.id}: ${model.ownedBy}`);
  }
  const catalog = new Catalog(DEFAULT_CATALOG, config, names);
  assert.ok(catalog.list().length > 0);
});
