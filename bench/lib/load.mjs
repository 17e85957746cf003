// Load generators, all pinned to the load core: wrk (throughput and latency under load) and
// the harness's own node clients (probe, bad input, soak), each printing one JSON line.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { LOAD_CORE, pinned } from './processes.mjs';

function run(command, args, env = {}) {
  const [program, ...programArgs] = pinned(LOAD_CORE, command, args);
  return new Promise((resolve, reject) => {
    execFile(program, programArgs, { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/**
 * wrk with one thread (the load core), POSTing `bodyFile` for `seconds`; latency in µs.
 * wrk's "requests" counts completed responses, including non-2xx, which are reported apart.
 */
export async function wrk(bench, { url, bodyFile, connections, seconds, apiKey, headers = {} }) {
  const output = await run(
    'wrk',
    ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', join(bench, 'post.lua'), url],
    { BENCH_BODY_FILE: bodyFile, BENCH_API_KEY: apiKey ?? '', BENCH_HEADERS: Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\n') },
  );
  const line = output.split('\n').find((candidate) => candidate.startsWith('BENCH_JSON '));
  if (line === undefined) throw new Error(`wrk printed no result:\n${output}`);
  return JSON.parse(line.slice('BENCH_JSON '.length));
}

/** Runs one of the harness's node clients and returns the JSON of its last line. */
export async function nodeClient(bench, script, args, env = {}) {
  const output = await run(process.execPath, [join(bench, script), ...args.map(String)], env);
  return JSON.parse(output.trim().split('\n').at(-1));
}
