import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CLI_NOT_BUILT } from './helpers/serve-process.js';
import { ENVIRONMENT_SETTINGS, loadConfig } from '../src/config/index.js';

/**
 * The runtime stage of the Dockerfile, run as a script on a clean copy: no image can be built
 * here (no registry for the base image), so its steps run on this machine instead.
 */
interface RuntimeStage {
  env: Record<string, string>;
  /** COPY sources from the build context. */
  contextCopies: string[];
  /** COPY --from=build sources (what the build stage made). */
  buildCopies: string[];
  runs: string[];
  healthcheck: string[];
  command: string[];
}

function runtimeStage(dockerfile: string): RuntimeStage {
  const text = dockerfile.replace(/\\\n/g, ' ');
  const stages = text.split(/^FROM /m);
  const lines = stages.at(-1)!.split('\n').map((line) => line.trim());
  const stage: RuntimeStage = { env: {}, contextCopies: [], buildCopies: [], runs: [], healthcheck: [], command: [] };
  for (const line of lines) {
    const [instruction, ...rest] = line.split(/\s+/);
    const argument = line.slice(instruction!.length).trim();
    if (instruction === 'ENV') for (const pair of rest) stage.env[pair.split('=')[0]!] = pair.split('=').slice(1).join('=');
    if (instruction === 'COPY') {
      const fromBuild = rest[0] === '--from=build';
      const sources = (fromBuild ? rest.slice(1) : rest).slice(0, -1);
      (fromBuild ? stage.buildCopies : stage.contextCopies).push(...sources.map((source) => source.replace(/^\/app\//, '')));
    }
    if (instruction === 'RUN') stage.runs.push(argument);
    if (instruction === 'HEALTHCHECK') stage.healthcheck = JSON.parse(argument.slice(argument.indexOf('CMD') + 3)) as string[];
    if (instruction === 'CMD') stage.command = JSON.parse(argument) as string[];
  }
  return stage;
}

/**
 * Puts the packages an install plan adds into the copy's node_modules, as links to this
 * checkout's (copying their ~110 MB would make the test slow). The copy's own code resolves
 * from its node_modules, so a dev dependency it imported would not be found. A package
 * nested under another one comes with it.
 */
function linkPackages(app: string, names: readonly string[]): void {
  for (const name of names) {
    const path = join('node_modules', name);
    if (!existsSync(path)) continue;
    mkdirSync(dirname(join(app, path)), { recursive: true });
    symlinkSync(resolve(path), join(app, path), 'dir');
  }
}

describe('production install (the Dockerfile\'s runtime stage on a clean copy)', { skip: CLI_NOT_BUILT }, () => {
  test('npm ci --omit=dev plans from the lockfile, prepare passes without TypeScript, and the copy starts ready', async () => {
    const stage = runtimeStage(readFileSync('Dockerfile', 'utf8'));
    assert.deepEqual(stage.buildCopies, ['dist']);
    assert.match(stage.runs.join('\n'), /npm ci --omit=dev --workspaces=false/);
    const root = mkdtempSync(join(tmpdir(), 'modelgate-production-'));
    const app = join(root, 'app');
    const dataDir = join(root, 'data');
    mkdirSync(app);
    try {
      for (const source of [...stage.contextCopies, ...stage.buildCopies]) cpSync(source, join(app, source), { recursive: true });

      // The install itself needs the registry, which is not reachable here: the plan is checked
      // against the lockfile offline, and the packages it names come from this checkout.
      const plan = spawnSync('npm', ['ci', '--omit=dev', '--workspaces=false', '--offline', '--dry-run', '--no-audit', '--no-fund'], { cwd: app, encoding: 'utf8' });
      assert.equal(plan.status, 0, plan.stderr);
      const planned = [...plan.stdout.matchAll(/^add (\S+) \S+$/gm)].map((match) => match[1]!);
      assert.ok(planned.includes('fastify') && planned.includes('better-sqlite3'), plan.stdout);
      linkPackages(app, [...new Set(planned)]);
      for (const tool of ['typescript', 'tsx', 'eslint', 'vite', 'openai', '@anthropic-ai/sdk']) {
        assert.ok(!existsSync(join(app, 'node_modules', tool)), `${tool} is a dev dependency; it must not be needed`);
      }

      // The lifecycle script npm ci runs: it must pass without the compilers.
      const prepare = spawnSync('npm', ['run', 'prepare'], { cwd: app, encoding: 'utf8' });
      assert.equal(prepare.status, 0, prepare.stderr);
      assert.match(prepare.stdout, /production install; using the built dist\//);

      const env = { ...process.env, ...stage.env, MODELGATE_HOST: '127.0.0.1', MODELGATE_PORT: '0', MODELGATE_DATA_DIR: dataDir, MODELGATE_LOG_LEVEL: 'warn', OPENAI_API_KEY: 'sk-placeholder-openai' };
      const [program, ...args] = stage.command;
      assert.equal(program, 'node');
      const child = spawn(process.execPath, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = once(child, 'exit');
      try {
        const url = await new Promise<string>((resolve, reject) => {
          child.stdout.on('data', (chunk: Buffer) => {
            output += chunk.toString();
            const match = /listening on (http:\/\/\S+)/.exec(output);
            if (match !== null) resolve(match[1]!);
          });
          exited.then(() => reject(new Error(`modelgate exited: ${output}`)), reject);
        });
        const ready = await fetch(`${url}/readyz`);
        assert.equal(ready.status, 200, await ready.clone().text());
        assert.deepEqual(((await ready.json()) as { checks: unknown }).checks, { storage: 'ok', redis: 'not_configured', providers: 'ok' });
        const dashboard = await fetch(`${url}/dashboard/`);
        assert.equal(dashboard.status, 200, 'the dashboard built into dist/web is served');

        // The image's HEALTHCHECK command, against this instance's port.
        const [checkProgram, ...checkArgs] = stage.healthcheck;
        assert.equal(checkProgram, 'node');
        const check = spawnSync(process.execPath, checkArgs, { cwd: app, env: { ...env, MODELGATE_PORT: new URL(url).port }, encoding: 'utf8' });
        assert.equal(check.status, 0, check.stderr);
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('deployment manifests', () => {
  const known = new Set([...ENVIRONMENT_SETTINGS.flatMap((setting) => setting.variables), 'MODELGATE_CONFIG', 'NODE_ENV']);

  test('the Kubernetes Deployment probes /readyz and /healthz and sets only variables the gateway reads', () => {
    interface Container {
      readinessProbe: { httpGet: { path: string } };
      livenessProbe: { httpGet: { path: string } };
      envFrom: { secretRef: { name: string } }[];
      env: { name: string }[];
    }
    const deployment = parseYaml(readFileSync('deploy/kubernetes/deployment.yaml', 'utf8')) as { spec: { template: { spec: { containers: Container[] } } } };
    const container = deployment.spec.template.spec.containers[0]!;
    assert.equal(container.readinessProbe.httpGet.path, '/readyz');
    assert.equal(container.livenessProbe.httpGet.path, '/healthz');
    assert.equal(container.envFrom[0]?.secretRef.name, 'modelgate');
    for (const { name } of container.env) assert.ok(known.has(name), `${name} is not a setting`);
    const secret = parseYaml(readFileSync('deploy/kubernetes/secret.yaml', 'utf8')) as { metadata: { name: string }; stringData: Record<string, string> };
    assert.equal(secret.metadata.name, 'modelgate');
    for (const name of Object.keys(secret.stringData)) assert.ok(known.has(name), `${name} is not a setting`);
    assert.ok('MODELGATE_ADMIN_TOKEN' in secret.stringData && 'MODELGATE_ENCRYPTION_KEY' in secret.stringData);
  });

  test('the compose file sets only variables the gateway reads, and its media settings are valid config', () => {
    const compose = parseYaml(readFileSync('deploy/compose.yaml', 'utf8')) as { services: Record<string, { environment?: Record<string, string> }> };
    for (const name of Object.keys(compose.services.modelgate?.environment ?? {})) assert.ok(known.has(name), `${name} is not a setting`);
    assert.deepEqual(Object.keys(compose.services).sort(), ['minio', 'minio-bucket', 'modelgate', 'postgres', 'redis']);
    const dir = mkdtempSync(join(tmpdir(), 'modelgate-compose-'));
    try {
      const config = loadConfig({ env: { MODELGATE_CONFIG: resolve('deploy/modelgate.compose.yaml'), MODELGATE_DATA_DIR: join(dir, 'data') }, cwd: dir });
      assert.equal(config.agents.mediaStore.kind, 's3');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
