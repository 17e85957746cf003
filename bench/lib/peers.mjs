// Peer gateways the benchmark can measure side by side with modelgate (`--peer=portkey`). Each
// is installed from npm at a pinned version, on first use, into a cache directory outside the
// repository (BENCH_PEER_CACHE, else $XDG_CACHE_HOME/modelgate-bench, else ~/.cache/modelgate-bench),
// so anyone gets the same peer and the ratio can be reproduced.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { freePort, startProcess } from './processes.mjs';

/**
 * Portkey's open-source gateway (TypeScript, Hono on Node). hono and @hono/node-server are
 * pinned to the versions of Portkey's own lockfile: with the newest its ranges allow, streamed
 * chat and embeddings fail with `TypeError: immutable`.
 */
const PORTKEY = {
  version: '1.15.2',
  packageJson: {
    private: true,
    dependencies: { '@portkey-ai/gateway': '1.15.2' },
    overrides: { hono: '4.9.7', '@hono/node-server': '1.13.5' },
  },
  script: 'node_modules/@portkey-ai/gateway/build/start-server.js',
};

function cacheDirectory() {
  return process.env.BENCH_PEER_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'modelgate-bench');
}

/** The peer's install folder, installed with npm (the public registry) when it is not there yet. */
function installed(name, peer) {
  const dir = join(cacheDirectory(), `${name}-${peer.version}`);
  if (existsSync(join(dir, peer.script))) return dir;
  process.stderr.write(`installing ${name} ${peer.version} from npm into ${dir}\n`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(peer.packageJson, null, 2)}\n`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--omit=dev', '--registry=https://registry.npmjs.org/'], { cwd: dir, stdio: ['ignore', 2, 2] });
  return dir;
}

/**
 * Starts the Portkey gateway, pinned like every server, routing to the OpenAI-compatible
 * upstream at `upstreamBase`; returns the process and the headers every request needs.
 */
export async function startPortkey(upstreamBase) {
  const dir = installed('portkey-gateway', PORTKEY);
  const port = await freePort();
  const server = await startProcess(`portkey ${PORTKEY.version}`, process.execPath, [join(dir, PORTKEY.script), `--port=${port}`, '--headless'], {
    cwd: dir,
    ready: /Ready for connections/,
  });
  return {
    ...server,
    base: `http://127.0.0.1:${port}`,
    headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${upstreamBase}/v1` },
    // Portkey passes the key on to the provider; the fake upstream takes any.
    apiKey: 'sk-bench-upstream-credential',
  };
}
