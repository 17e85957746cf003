import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify as toYaml } from 'yaml';
import { writeServiceAccountFile } from './fakes/vertex.js';
import { PLACEHOLDER_PROVIDER_KEYS, TEST_ADMIN_TOKEN } from './helpers/gateway.js';
import { CLI_NOT_BUILT, startServeProcess } from './helpers/serve-process.js';

/**
 * The libraries a gateway loads only when a call needs them (docs/performance.md, "Memory and soak"):
 * each costs resident memory in every process that imports it, configured or not.
 */
const LOADED_ON_FIRST_USE = [
  '@modelcontextprotocol/sdk',
  'zod',
  '@smithy/signature-v4',
  '@smithy/eventstream-codec',
  '@aws-sdk/credential-provider-node',
  'google-auth-library',
  'openid-client',
  'csv-parse',
];

/** The package a loaded module's URL belongs to (`@scope/name` or `name`), or null for the gateway's own files and node's. */
function packageOf(url: string): string | null {
  if (!url.startsWith('file:')) return null;
  const path = fileURLToPath(url);
  const at = path.lastIndexOf('/node_modules/');
  if (at === -1) return null;
  const [first, second] = path.slice(at + '/node_modules/'.length).split('/');
  return first!.startsWith('@') ? `${first}/${second}` : first!;
}

test('`serve` with Bedrock, Vertex and single sign-on configured loads none of their libraries, nor the MCP SDK, until a call needs them', { skip: CLI_NOT_BUILT }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-lazy-'));
  const loaded = join(dir, 'loaded.txt');
  writeFileSync(loaded, '');
  const config = join(dir, 'modelgate.yaml');
  writeFileSync(
    config,
    toYaml({ auth: { oidc: { issuer: 'https://sso.example.com', clientId: 'modelgate', clientSecretEnv: 'LAZY_TEST_OIDC_SECRET', roles: { admin: ['admins'] } } } }),
  );
  const server = await startServeProcess(
    {
      ...PLACEHOLDER_PROVIDER_KEYS,
      MODELGATE_PORT: '0',
      MODELGATE_DATA_DIR: join(dir, 'data'),
      MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      MODELGATE_CONFIG: config,
      LAZY_TEST_OIDC_SECRET: 'oidc-client-secret',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      GOOGLE_APPLICATION_CREDENTIALS: writeServiceAccountFile().path,
      GOOGLE_CLOUD_LOCATION: 'us-central1',
      LOADED_MODULES_FILE: loaded,
    },
    // Every module node loads, in each process of the serve, written down as it loads.
    ['--import', './test/fixtures/record-loads.mjs'],
  );
  try {
    const providers = await fetch(`${server.url}/admin/v1/providers`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    const names = ((await providers.json()) as { data: { name: string }[] }).data.map((provider) => provider.name);
    assert.ok(names.includes('bedrock') && names.includes('vertex'), `configured: ${names.join(', ')}`);
    assert.deepEqual(await (await fetch(`${server.url}/admin/v1/sso`)).json(), { enabled: true, provider_name: 'single sign-on' });
  } finally {
    assert.equal(await server.stop(), 0);
  }
  const packages = new Set(readFileSync(loaded, 'utf8').split('\n').map(packageOf));
  // The hook saw the server's modules: the test would pass vacuously otherwise.
  assert.ok(packages.has('fastify') && packages.has('kysely'), [...packages].join(', '));
  assert.deepEqual(LOADED_ON_FIRST_USE.filter((name) => packages.has(name)), []);
});
