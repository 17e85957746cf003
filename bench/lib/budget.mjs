// Issue 7's budget read off one run: each line, modelgate's figure against it, and — where the
// run has them — the same figure for the minimal gateway (the required work alone) and the
// bare proxy (the transport alone), each held to the same line. So a reader can tell a line
// modelgate misses from one that the required work, or the machine's own transport, misses in
// that hour. A report, never a test: the figures move with the machine (docs/performance.md).

/** Targets each line is read for, in column order. */
const TARGETS = ['modelgate', 'minimal gateway', 'bare proxy'];

/** Latency lines of issue 7 §2: ms added to direct at one connection. */
const LATENCY_LINES = [
  { name: 'added latency at one connection, p50', kind: 'chat', figure: 'total_us', percentile: 'p50', limitMs: 0.3 },
  { name: 'added latency at one connection, p99', kind: 'chat', figure: 'total_us', percentile: 'p99', limitMs: 1 },
  { name: 'streamed time to first byte, p50', kind: 'stream', figure: 'ttfb_us', percentile: 'p50', limitMs: 0.5 },
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
    const bare = rowOf('bare proxy');
    if (bare === undefined || rowOf('modelgate') === undefined) continue;
    const cpu = {};
    const throughput = {};
    for (const target of TARGETS.filter((name) => name !== 'bare proxy')) {
      const row = rowOf(target);
      if (row === undefined) continue;
      const cpuRatio = row.cpu_us_per_request / bare.cpu_us_per_request;
      cpu[target] = { text: `${row.cpu_us_per_request.toFixed(0)} µs (${cpuRatio.toFixed(2)}×)`, met: cpuRatio <= 1 };
      const rpsRatio = row.rps / bare.rps;
      throughput[target] = { text: `${row.rps.toFixed(0)} req/s (${rpsRatio.toFixed(2)}×)`, met: rpsRatio >= 1 };
    }
    lines.push({ line: `CPU per request, ${scenario}`, limit: `≤ bare proxy's ${bare.cpu_us_per_request.toFixed(0)} µs`, figures: cpu });
    lines.push({ line: `throughput, ${scenario}`, limit: `≥ bare proxy's ${bare.rps.toFixed(0)} req/s`, figures: throughput });
  }
  const latency = results.latency_one_connection;
  for (const spec of latency === undefined ? [] : LATENCY_LINES) {
    const measured = latency[spec.kind] ?? {};
    const direct = measured.direct;
    if (direct === undefined || measured.modelgate === undefined) continue;
    const figures = {};
    for (const target of TARGETS.filter((name) => measured[name] !== undefined)) {
      const addedMs = (measured[target][spec.figure][spec.percentile] - direct[spec.figure][spec.percentile]) / 1000;
      figures[target] = { text: `${addedMs < 0 ? '−' : '+'}${Math.abs(addedMs).toFixed(3)} ms`, met: addedMs <= spec.limitMs };
    }
    lines.push({ line: spec.name, limit: `≤ +${spec.limitMs} ms`, figures });
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
  const header = ['issue 7 budget', 'held to', ...targets];
  const cell = (figure) => (figure === undefined ? '' : `${figure.text} ${figure.met ? 'met' : 'NOT MET'}`);
  const cells = lines.map((entry) => [entry.line, entry.limit, ...targets.map((target) => cell(entry.figures[target]))]);
  const widths = header.map((title, index) => Math.max(title.length, ...cells.map((row) => row[index].length)));
  const format = (row) => row.map((text, index) => text.padEnd(widths[index])).join('  ').trimEnd();
  write(`\n${format(header)}\n${cells.map(format).join('\n')}\n`);
  write('Every target is held to the same line; one run on a shared VM, so a line can move in another hour (docs/performance.md).\n');
}
