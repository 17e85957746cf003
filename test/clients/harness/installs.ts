/**
 * The coding-agent CLIs the client tests run, pinned, each installed from the npm registry on
 * first use into a cache folder outside the repository (MODELGATE_CLIENT_CACHE, else
 * $XDG_CACHE_HOME/modelgate/coding-agents, else ~/.cache/modelgate/coding-agents), as the
 * benchmark installs its peers: together they are over a gigabyte, so they are not
 * dependencies of the package and `npm install` stays quick.
 *
 * They are installed with `--ignore-scripts`, so nothing runs at install time and nothing is
 * fetched from anywhere but the registry. Most ship their native binary as an npm optional
 * dependency (a package per platform) whose postinstall script only copies it over a
 * placeholder: the harness starts the binary from the platform package itself. The Gemini CLI
 * is a Node bundle whose optional native addons (a pseudo-terminal, the keychain) are left
 * unbuilt: it then runs shell commands as plain child processes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type ClientName = 'claude-code' | 'codex' | 'opencode' | 'pi' | 'gemini-cli';

interface PinnedClient {
  /** The npm package and its exact version. */
  package: string;
  version: string;
  /** The program to start, relative to the install folder (a native binary or a Node script). */
  program: string;
  /** Whether `program` is a Node script (started with this Node) rather than a native binary. */
  node: boolean;
}

/**
 * The versions under test: the newest whose `engines` allow Node 20 (Claude Code 2.1.198 and
 * later need Node 22). Bump a version here and the client tests show what changed.
 */
export const PINNED_CLIENTS: Record<ClientName, PinnedClient> = {
  'claude-code': {
    package: '@anthropic-ai/claude-code',
    version: '2.1.197',
    program: 'node_modules/@anthropic-ai/claude-code-linux-x64/claude',
    node: false,
  },
  codex: {
    package: '@openai/codex',
    version: '0.171.0',
    program: 'node_modules/@openai/codex/bin/codex.js',
    node: true,
  },
  opencode: {
    package: 'opencode-ai',
    version: '1.18.33',
    program: 'node_modules/opencode-linux-x64/bin/opencode',
    node: false,
  },
  pi: {
    package: '@mariozechner/pi-coding-agent',
    version: '0.73.1',
    program: 'node_modules/@mariozechner/pi-coding-agent/dist/cli.js',
    node: true,
  },
  'gemini-cli': {
    package: '@google/gemini-cli',
    version: '0.61.0',
    program: 'node_modules/@google/gemini-cli/bundle/gemini.js',
    node: true,
  },
};

/** Why the client tests cannot run here, or false: the binaries are built for Linux on x64. */
export const CLIENTS_UNSUPPORTED: string | false = process.platform === 'linux' && process.arch === 'x64' ? false : `the pinned client binaries are for linux-x64, not ${process.platform}-${process.arch}`;

function cacheDirectory(): string {
  return process.env.MODELGATE_CLIENT_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'modelgate', 'coding-agents');
}

export interface InstalledClient {
  name: ClientName;
  version: string;
  /** The command and the arguments before the CLI's own. */
  command: string;
  prefix: string[];
}

/**
 * The client's install folder, installed when it is not there yet. The install goes to a
 * folder of its own and is renamed into place when complete, so a test file that finds the
 * folder finds a whole install, and two test files installing at once cost a second install,
 * never a broken one.
 */
export function installedClient(name: ClientName): InstalledClient {
  const pinned = PINNED_CLIENTS[name];
  const dir = join(cacheDirectory(), `${name}-${pinned.version}`);
  if (!existsSync(join(dir, pinned.program))) install(dir, pinned);
  const program = join(dir, pinned.program);
  return { name, version: pinned.version, command: pinned.node ? process.execPath : program, prefix: pinned.node ? [program] : [] };
}

function install(dir: string, pinned: PinnedClient): void {
  const staging = `${dir}.installing-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  writeFileSync(join(staging, 'package.json'), `${JSON.stringify({ private: true, dependencies: { [pinned.package]: pinned.version } }, null, 2)}\n`);
  process.stderr.write(`installing ${pinned.package}@${pinned.version} from npm into ${dir}\n`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--omit=dev', '--ignore-scripts', '--registry=https://registry.npmjs.org/'], {
    cwd: staging,
    stdio: ['ignore', 2, 2],
    // The pinned versions, and everything they install, must allow the Node the tests run on.
    env: { ...process.env, npm_config_engine_strict: 'true' },
  });
  if (!existsSync(join(staging, pinned.program))) throw new Error(`${pinned.package}@${pinned.version} installed without ${pinned.program}`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  const manifest = JSON.parse(readFileSync(join(dir, 'node_modules', pinned.package, 'package.json'), 'utf8')) as { version: string };
  if (manifest.version !== pinned.version) throw new Error(`${pinned.package}: installed ${manifest.version}, pinned ${pinned.version}`);
}
