// The performance budget (docs/performance.md, "The budget") read off one run: each line,
// modelgate's figure against it and — where the run has one — the minimal gateway's (the
// required work alone), held to the same line, so a reader can tell a line modelgate misses
// from one the required work misses in that hour. Every line is read against the bare proxy
// of the same run (the Portkey line against Portkey). A report, never a test: the figures
// move with the machine.

/** Targets each line is read for, in column order. */
const TARGETS = ['modelgate', 'minimal gateway', 'fastify proxy'];
const BARE = 'bare proxy';

/** CPU per request (the whole process, every thread) at most this many times the bare proxy's, by scenario name (before " c="). */
const CPU_LIMITS = { chat: 1.6, embeddings: 1.6, 'stream 22 events': 1.3, 'image 1 MiB': 2 };
/** CPU per request on the event-loop thread alone, against the bare proxy's event loop. */
const LOOP_CPU_LIMITS = { chat: 1.3 };
/**
 * The other surfaces, held to modelgate's own CPU per request in a scenario of the same run:
 * a format's stream to the chat stream of the same answer, a fallback (a failed attempt, then
 * the one that answers) to two chat requests.
 */
const SURFACE_LIMITS = [
  { scenario: 'messages stream', reference: 'stream', times: 1 },
  { scenario: 'responses stream', reference: 'stream', times: 1 },
  { scenario: 'gemini stream', reference: 'stream', times: 1 },
  { scenario: 'messages stream', reference: 'chat', times: 2 },
  { scenario: 'responses stream', reference: 'chat', times: 2 },
  { scenario: 'gemini stream', reference: 'chat', times: 2 },
  { scenario: 'fallback', reference: 'chat', times: 2 },
];
/** Throughput at 50 connections at least this many times the Portkey gateway's. */
const PEER_THROUGHPUT_LIMIT = 5;

/** Latency lines: ms added to the bare proxy's at one connection. */
const LATENCY_LINES = [
  { name: 'added latency at one connection, p50', kind: 'chat', figure: 'total_us', percentile: 'p50', limitMs: 0.3 },
  { name: 'added latency at one connection, p99', kind: 'chat', figure: 'total_us', percentile: 'p99', limitMs: 1.0 },
  { name: 'streamed time to first byte, p50', kind: 'stream', figure: 'ttfb_us', percentile: 'p50', limitMs: 0.3 },
];
const OPEN_STREAMS_LIMIT_MB = 150;
const SOAK_LIMIT_PCT = 10;

/**
 * The budget's lines that `results` (run.mjs's) has figures for, each `{ line, limit, figures }`,
 * figures by target name: `{ text, met }`.
 */
export function budgetLines(results) {
  const lines = [];
  const rows = results.rows ?? [];
  for (const scenario of new Set(rows.map((row) => row.scenario))) {
    const rowOf = (target) => rows.find((row) => row.scenario === scenario && row.target === target);
    const bare = rowOf(BARE);
    const portkey = rows.find((row) => row.scenario === scenario && row.target.startsWith('portkey'));
    const cpuLimit = CPU_LIMITS[scenario.split(' c=')[0]];
    const loopLimit = LOOP_CPU_LIMITS[scenario.split(' c=')[0]];
    if (rowOf('modelgate') === undefined) continue;
    const cpu = {};
    const loop = {};
    const throughput = {};
    for (const target of TARGETS) {
      const row = rowOf(target);
      if (row === undefined) continue;
      // A target that refused requests did less work than the line assumes: its figure proves nothing.
      if (row.errors > 0) {
        cpu[target] = { text: `${row.errors} errors`, met: false };
        continue;
      }
      if (bare !== undefined && cpuLimit !== undefined) {
        const ratio = row.cpu_us_per_request / bare.cpu_us_per_request;
        cpu[target] = { text: `${row.cpu_us_per_request.toFixed(0)} µs (${ratio.toFixed(2)}×)`, met: ratio <= cpuLimit };
      }
      if (bare?.loop_cpu_us_per_request !== undefined && loopLimit !== undefined) {
        const ratio = row.loop_cpu_us_per_request / bare.loop_cpu_us_per_request;
        loop[target] = { text: `${row.loop_cpu_us_per_request.toFixed(0)} µs (${ratio.toFixed(2)}×)`, met: ratio <= loopLimit };
      }
      if (portkey !== undefined && scenario.endsWith('c=50')) {
        const ratio = row.rps / portkey.rps;
        throughput[target] = { text: `${row.rps.toFixed(0)} req/s (${ratio.toFixed(1)}×)`, met: ratio >= PEER_THROUGHPUT_LIMIT };
      }
    }
    if (Object.keys(cpu).length > 0) lines.push({ line: `CPU per request, ${scenario}`, limit: `≤ ${cpuLimit}× bare proxy's ${bare.cpu_us_per_request.toFixed(0)} µs`, figures: cpu });
    if (Object.keys(loop).length > 0) {
      lines.push({ line: `event-loop CPU per request, ${scenario}`, limit: `≤ ${loopLimit}× bare proxy's ${bare.loop_cpu_us_per_request.toFixed(0)} µs`, figures: loop });
    }
    if (Object.keys(throughput).length > 0) {
      lines.push({ line: `throughput, ${scenario}`, limit: `≥ ${PEER_THROUGHPUT_LIMIT}× ${portkey.target}'s ${portkey.rps.toFixed(0)} req/s`, figures: throughput });
    }
  }
  const modelgateCpu = (name) => rows.find((row) => row.scenario.split(' c=')[0] === name && row.target === 'modelgate')?.cpu_us_per_request;
  for (const { scenario, reference, times } of SURFACE_LIMITS) {
    const cpu = modelgateCpu(scenario);
    const referenceCpu = modelgateCpu(reference);
    if (cpu === undefined || referenceCpu === undefined) continue;
    const ratio = cpu / referenceCpu;
    lines.push({
      line: `CPU per request, ${scenario}`,
      limit: `≤ ${times === 1 ? '' : `${times}× `}modelgate's ${reference} (${referenceCpu.toFixed(0)} µs)`,
      figures: { modelgate: { text: `${cpu.toFixed(0)} µs (${ratio.toFixed(2)}×)`, met: ratio <= times } },
    });
  }
  const latency = results.latency_one_connection;
  for (const spec of latency === undefined ? [] : LATENCY_LINES) {
    const measured = latency[spec.kind] ?? {};
    const bare = measured[BARE];
    if (bare === undefined || measured.modelgate === undefined) continue;
    const figures = {};
    for (const target of TARGETS.filter((name) => measured[name] !== undefined)) {
      const addedMs = (measured[target][spec.figure][spec.percentile] - bare[spec.figure][spec.percentile]) / 1000;
      figures[target] = { text: `${addedMs < 0 ? '−' : '+'}${Math.abs(addedMs).toFixed(3)} ms`, met: addedMs <= spec.limitMs };
    }
    lines.push({ line: spec.name, limit: `≤ bare proxy + ${spec.limitMs} ms`, figures });
  }
  const streams = results.open_streams;
  if (streams !== undefined) {
    lines.push({
      line: 'RSS with 500 open streams',
      limit: `≤ ${OPEN_STREAMS_LIMIT_MB} MB`,
      figures: {
        modelgate: {
          text: `${streams.rss_with_streams_mb.toFixed(1)} MB (${streams.open_streams} open)`,
          met: streams.open_streams === 500 && streams.rss_with_streams_mb <= OPEN_STREAMS_LIMIT_MB,
        },
      },
    });
  }
  const soak = results.soak;
  if (soak !== undefined) {
    lines.push({
      line: 'RSS flat over the soak',
      limit: `± ${SOAK_LIMIT_PCT} % of the median`,
      figures: {
        modelgate: {
          text: `within ${soak.settled_max_deviation_pct.toFixed(1)} % of ${soak.settled_median_mb.toFixed(1)} MB`,
          met: soak.settled_max_deviation_pct <= SOAK_LIMIT_PCT,
        },
      },
    });
  }
  return lines;
}

export function printBudget(lines, write = (text) => process.stdout.write(text)) {
  if (lines.length === 0) return;
  const targets = TARGETS.filter((target) => lines.some((entry) => entry.figures[target] !== undefined));
  const header = ['budget line', 'held to', ...targets];
  const cell = (figure) => (figure === undefined ? '' : `${figure.text} ${figure.met ? 'met' : 'NOT MET'}`);
  const cells = lines.map((entry) => [entry.line, entry.limit, ...targets.map((target) => cell(entry.figures[target]))]);
  const widths = header.map((title, index) => Math.max(title.length, ...cells.map((row) => row[index].length)));
  const format = (row) => row.map((text, index) => text.padEnd(widths[index])).join('  ').trimEnd();
  write(`\n${format(header)}\n${cells.map(format).join('\n')}\n`);
  write('Every target is held to the same line; one run on a shared VM, so a line can move in another hour (docs/performance.md).\n');
}
