import { spawn } from 'node:child_process';
import cluster from 'node:cluster';

/**
 * The node flags `modelgate serve` runs with, however it is started (docs/deployment.md,
 * "The node flags"): one V8 helper thread instead of four, which only contend with the event
 * loop, and a smaller young generation (less resident memory for the same work). Node reads
 * both only at start-up, so a process started without them cannot take them on: the CLI runs
 * the server in a child process that has them. `npm start` passes them itself (no second
 * process); the two lists are kept equal by a test.
 */
export const SERVE_NODE_FLAGS = ['--v8-pool-size=1', '--max-semi-space-size=8'] as const;

/** Signals a launcher passes to the server: those supervisors and terminals send to stop a process, and SIGHUP (reload the routing). */
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** `MODELGATE_RELAUNCH=false`: for supervisors that start node with flags of their own. */
const RELAUNCH_VARIABLE = 'MODELGATE_RELAUNCH';

/** A flag's name as node compares it: before any `=`, with `_` and `-` alike. */
function flagName(argument: string): string {
  return argument.split('=')[0]!.replaceAll('_', '-');
}

/** The flags of SERVE_NODE_FLAGS that neither the command line nor NODE_OPTIONS gives (a value given there is kept). */
export function missingServeFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = new Set([...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map(flagName));
  return SERVE_NODE_FLAGS.filter((flag) => !given.has(flagName(flag)));
}

/** Whether MODELGATE_RELAUNCH allows a relaunch; a value that is neither true nor false ends the command (exit 2). */
function relaunchAllowed(): boolean {
  const value = process.env[RELAUNCH_VARIABLE]?.trim().toLowerCase();
  if (value === undefined || value === '' || value === 'true') return true;
  if (value === 'false') return false;
  process.stderr.write(`modelgate: ${RELAUNCH_VARIABLE} must be true or false (false: serve in this process, with the node flags it was started with)\n`);
  process.exit(2);
}

/**
 * For `modelgate serve` (`args`: the command line after the script), runs this very command
 * again in a child process with the node flags this one lacks, and returns true; returns false
 * (go on in this process) for any other command, for `serve --help`, when the flags are
 * already there, in a cluster worker (it inherits its primary's flags), or with
 * MODELGATE_RELAUNCH=false. The bin calls it before it loads the CLI, so the process that only
 * launches loads nothing else.
 *
 * The child shares stdin, stdout and stderr, so the output is the server's own. It runs in a
 * session of its own, so a terminal's Ctrl-C reaches it once, through this process:
 * SIGINT, SIGTERM and SIGHUP are passed on, and this process ends as the child did (its exit
 * code, or the same signal). Should this process die without passing anything on (SIGKILL),
 * the child sees its IPC channel close and shuts down gracefully (`onLauncherGone`).
 */
export function relaunchWithNodeFlags(args: readonly string[]): boolean {
  if (args[0] !== 'serve' || args.includes('--help') || args.includes('-h')) return false;
  if (cluster.isWorker) return false;
  const missing = missingServeFlags(process.execArgv, process.env.NODE_OPTIONS);
  if (missing.length === 0 || !relaunchAllowed()) return false;
  const child = spawn(process.execPath, [...process.execArgv, ...missing, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    // The child has the flags, so it would not relaunch; the variable makes sure of it.
    env: { ...process.env, [RELAUNCH_VARIABLE]: 'false' },
    detached: true,
  });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  child.once('error', (error) => {
    process.stderr.write(`modelgate: could not start the server process: ${error.message}\n`);
    process.exit(1);
  });
  child.once('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    for (const forwarded of FORWARDED_SIGNALS) process.off(forwarded, forward);
    process.kill(process.pid, signal);
  });
  return true;
}

/**
 * Calls `stop` once the launcher that started this process is gone (its IPC channel closed),
 * at once if it already is. A process started any other way has no such channel: nothing happens.
 */
export function onLauncherGone(stop: () => void): void {
  if (cluster.isWorker || process.send === undefined) return;
  if (!process.connected) return stop();
  process.once('disconnect', stop);
}
