import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';

/** Tests that run the real CLI need the compiled build (npm test builds it first). */
export const CLI_BUILT = existsSync('dist/cli/main.js');
export const CLI_NOT_BUILT = CLI_BUILT ? false : 'dist/ is not built (npm test builds it; or run npm run build)';

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Resolves with [exit code, signal] when the process ends. */
  readonly exited: Promise<unknown[]>;
  /** Everything it wrote so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `node <nodeArgs> bin/modelgate.js serve` with `env` and resolves once it listens.
 * Without the node flags of `npm start` the process started is a launcher and the server its
 * child (src/cli/node-flags.ts): signals that stop a process reach the server through it; a
 * test that acts on the server process itself (kills it, plants a fault) sets
 * MODELGATE_RELAUNCH=false, as a supervisor with node flags of its own does.
 */
export async function startServeProcess(env: Record<string, string>, nodeArgs: readonly string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...nodeArgs, 'bin/modelgate.js', 'serve'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = once(child, 'exit');
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match !== null) resolve(match[1]!);
    });
    exited.then(([code]) => reject(new Error(`modelgate exited with ${String(code)}: ${output}`)), reject);
  });
  return {
    child,
    url,
    exited,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}
