// Processes of the benchmark: start them pinned to a core, stop them, and read what the
// kernel knows about them (CPU time, RSS, the busy time of each core) from /proc.
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Core of the load generators (wrk, probes, the harness itself). */
export const LOAD_CORE = 0;
/** Core of every server: upstream, bare proxy, modelgate. */
export const SERVER_CORE = 1;
/** Both cores: the workers comparison lets servers use the whole machine. */
export const BOTH_CORES = '0,1';
const CLK_TCK = 100;

/**
 * Scheduling priority of every benchmark process. On a shared machine other work steals
 * the servers' core at random moments; a higher priority (root only) keeps the comparison
 * about the servers. BENCH_NICE=0 turns it off.
 */
const NICE = process.getuid?.() === 0 ? Number(process.env.BENCH_NICE ?? -10) : 0;

const children = new Set();

/** The command prefix that pins to `core` (and raises the priority when allowed). */
export function pinned(core, command, args) {
  const pin = ['taskset', '-c', String(core), command, ...args];
  return NICE === 0 ? pin : ['nice', '-n', String(NICE), ...pin];
}

/** Pins this process (all its threads) to the load core, so the harness never runs on the servers' core. */
export function pinSelf() {
  execFileSync('taskset', ['-a', '-p', '-c', String(LOAD_CORE), String(process.pid)], { stdio: 'ignore' });
  if (NICE !== 0) execFileSync('renice', ['-n', String(NICE), '-p', String(process.pid)], { stdio: 'ignore' });
}

export function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `command` pinned to `core` and resolves when a stdout line matches `ready`, with the
 * time it took. `nice` and `taskset` exec the command, so the child's pid is the server's.
 */
export function startProcess(name, command, args, { env = {}, core = SERVER_CORE, ready, cwd }) {
  const [program, ...programArgs] = pinned(core, command, args);
  const started = performance.now();
  const child = spawn(program, programArgs, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let stderr = '';
  child.stderr.on('data', (data) => {
    stderr += data;
    if (process.env.BENCH_VERBOSE) process.stderr.write(`[${name}] ${data}`);
  });
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 60 s: ${stderr}`)), 60_000);
    child.stdout.on('data', (data) => {
      buffer += data;
      const line = buffer.split('\n').find((candidate) => ready.test(candidate));
      if (line !== undefined) {
        clearTimeout(timer);
        resolve({ name, child, pid: child.pid, line, startupMs: performance.now() - started, stderr: () => stderr });
      }
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}: ${stderr}`)));
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export function stop(processInfo, graceMs = 15_000) {
  const { child } = processInfo;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export function killAll() {
  for (const child of children) child.kill('SIGKILL');
}

/** `pid` and its descendants (cluster workers), read from /proc. */
export function processTree(pid) {
  const tree = [pid];
  for (let index = 0; index < tree.length; index += 1) {
    const parent = tree[index];
    let tasks = [];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const text = readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8').trim();
        if (text.length > 0) tree.push(...text.split(/\s+/).map(Number));
      } catch {
        // the task ended meanwhile
      }
    }
  }
  return tree;
}

/** User + system seconds of one /proc stat file's fields. */
function cpuSeconds(fields) {
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

function statFields(path) {
  return readFileSync(path, 'utf8').split(') ')[1].split(' ');
}

/**
 * CPU seconds (user + system), system seconds and minor page faults of one process (all its
 * threads, dead ones included), and the CPU seconds of its main thread alone — the event
 * loop's (/proc/<pid>/task/<pid>/stat: the main thread's id is the process's).
 */
function usageOf(pid) {
  try {
    const fields = statFields(`/proc/${pid}/stat`);
    const system = Number(fields[12]) / CLK_TCK;
    let loop = 0;
    try {
      loop = cpuSeconds(statFields(`/proc/${pid}/task/${pid}/stat`));
    } catch {
      // the task ended meanwhile
    }
    return { cpu: cpuSeconds(fields), system, faults: Number(fields[7]), loop };
  } catch {
    return { cpu: 0, system: 0, faults: 0, loop: 0 };
  }
}

/**
 * A usage snapshot of the processes of each group (a server and its workers), per pid, so a
 * group's usage is the sum over its processes — processes that appear later count from zero.
 */
export function usageSnapshot(groups) {
  const snapshot = {};
  for (const [name, rootPid] of Object.entries(groups)) {
    snapshot[name] = Object.fromEntries(processTree(rootPid).map((pid) => [pid, usageOf(pid)]));
  }
  return snapshot;
}

/**
 * What each group used between two snapshots: { cpu, system, loop } seconds (loop: the main
 * threads' alone) and minor page faults.
 */
export function usageBetween(before, after) {
  const used = {};
  for (const [name, pids] of Object.entries(after)) {
    const total = { cpu: 0, system: 0, faults: 0, loop: 0 };
    for (const [pid, usage] of Object.entries(pids)) {
      const start = before[name]?.[pid];
      for (const key of Object.keys(total)) total[key] += usage[key] - (start?.[key] ?? 0);
    }
    used[name] = total;
  }
  return used;
}

function statusField(pid, field) {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Current RSS of a process and its workers together, MB. */
export function rssMb(pid) {
  return processTree(pid).reduce((sum, member) => sum + statusField(member, 'VmRSS'), 0);
}

/** Peak RSS since the last reset, of a process and its workers together (sum of each one's peak), MB. */
export function peakRssMb(pid) {
  return processTree(pid).reduce((sum, member) => sum + statusField(member, 'VmHWM'), 0);
}

export function resetPeakRss(pid) {
  for (const member of processTree(pid)) {
    try {
      writeFileSync(`/proc/${member}/clear_refs`, '5');
    } catch {
      // not permitted or gone: the peak then covers the process lifetime
    }
  }
}

/** Busy seconds of each core since boot (everything but idle and iowait). */
export function coreBusySeconds() {
  const busy = {};
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const match = /^cpu(\d+) (.*)$/.exec(line);
    if (!match) continue;
    const [user, nice, system, , , irq, softirq, steal] = match[2].trim().split(/\s+/).map(Number);
    busy[match[1]] = (user + nice + system + irq + softirq + steal) / CLK_TCK;
  }
  return busy;
}

export function loadAverage() {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}
