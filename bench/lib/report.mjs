// The results table: per scenario and target, with differences and ratios to direct.

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function printTable(rows, write = (text) => process.stdout.write(text)) {
  const direct = new Map(rows.filter((row) => row.target === 'direct').map((row) => [row.scenario, row]));
  const bare = new Map(rows.filter((row) => row.target === 'bare proxy').map((row) => [row.scenario, row]));
  const header = ['scenario', 'target', 'req/s', '×direct', '×bare', 'p50 ms', 'p90 ms', 'p99 ms', 'Δp50 ms', 'CPU µs/req', '×bare CPU', 'loop µs', '×bare loop', 'sys µs', 'faults', 'upstream µs', 'peak RSS MB', 'errors', 'other load %'];
  const lines = rows.map((row) => {
    const base = direct.get(row.scenario);
    const floor = bare.get(row.scenario);
    const isDirect = row.target === 'direct';
    return [
      row.scenario,
      row.target,
      row.rps.toFixed(0),
      base ? (row.rps / base.rps).toFixed(2) : '',
      floor ? (row.rps / floor.rps).toFixed(2) : '',
      row.p50_ms.toFixed(2),
      row.p90_ms.toFixed(2),
      row.p99_ms.toFixed(2),
      base ? (row.p50_ms - base.p50_ms).toFixed(2) : '',
      row.cpu_us_per_request.toFixed(0),
      floor && !isDirect ? (row.cpu_us_per_request / floor.cpu_us_per_request).toFixed(2) : '',
      row.loop_cpu_us_per_request?.toFixed(0) ?? '',
      floor?.loop_cpu_us_per_request !== undefined && !isDirect ? (row.loop_cpu_us_per_request / floor.loop_cpu_us_per_request).toFixed(2) : '',
      row.system_us_per_request.toFixed(0),
      row.minor_faults_per_request.toFixed(1),
      row.upstream_cpu_us_per_request.toFixed(0),
      row.peak_rss_mb.toFixed(0),
      String(row.errors),
      row.server_core_other_pct.toFixed(0),
    ];
  });
  const widths = header.map((title, index) => Math.max(title.length, ...lines.map((line) => line[index].length)));
  const format = (cells) => cells.map((cell, index) => (index < 2 ? cell.padEnd(widths[index]) : cell.padStart(widths[index]))).join('  ');
  write(`\n${format(header)}\n${lines.map(format).join('\n')}\n`);
  write('CPU µs/req: the server process alone, every thread (modelgate: all its workers); for direct, the upstream. loop µs: the main thread of each process alone (the event loop). sys µs, faults: the system-time part of it and minor page faults, per request. other load %: the server core used by other processes.\n');
}
