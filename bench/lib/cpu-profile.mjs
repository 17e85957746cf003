// Reads a V8 .cpuprofile: where the samples fall, by function (self and inclusive time) and
// by area (a package, node's internals, a modelgate file). Also reads a sampling heap profile
// (.heapprofile): the bytes allocated, by function and area.

function areaOf(url) {
  if (url === '') return '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1];
  const own = /\/dist\/(.*)$/.exec(url);
  if (own) return own[1].replace(/\.js$/, '');
  return url;
}

/** A function's name and where it is: node's own module path, package-relative or dist-relative. */
function label(node) {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = functionName || '(anonymous)';
  if (url === '') return name;
  const place = url.startsWith('node:') ? url : url.replace(/^.*\/node_modules\//, '').replace(/^.*\/dist\//, '');
  return `${name} ${place}:${lineNumber + 1}`;
}

/**
 * Sample counts by function (self, inclusive) and area (self), as shares of all non-idle
 * samples; with `requests`, also the busy time per request (inflated by the profiler itself).
 */
export function summarize(profile, requests) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map();
  const inclusive = new Map();
  const areas = new Map();
  let total = 0;
  let idle = 0;
  let busyMicros = 0;
  profile.samples.forEach((id, index) => {
    const node = byId.get(id);
    if (node.callFrame.functionName === '(idle)') {
      idle += 1;
      return;
    }
    total += 1;
    busyMicros += profile.timeDeltas[index + 1] ?? 0;
    const name = label(node);
    self.set(name, (self.get(name) ?? 0) + 1);
    const area = ['(garbage collector)', '(program)'].includes(node.callFrame.functionName) ? node.callFrame.functionName : areaOf(node.callFrame.url);
    areas.set(area, (areas.get(area) ?? 0) + 1);
    const seen = new Set();
    for (let current = id; current !== undefined; current = parent.get(current)) {
      const ancestor = label(byId.get(current));
      if (seen.has(ancestor)) continue;
      seen.add(ancestor);
      inclusive.set(ancestor, (inclusive.get(ancestor) ?? 0) + 1);
    }
  });
  const top = (map, count) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, samples]) => ({ name, share: samples / total }));
  return {
    samples: total,
    idle_share: idle / (total + idle),
    busy_us_per_request: requests ? busyMicros / requests : null,
    self: top(self, 40),
    inclusive: top(inclusive, 60),
    areas: top(areas, 30),
  };
}

export function printSummary(summary, write = (text) => process.stdout.write(text)) {
  const pct = (share) => `${(share * 100).toFixed(1).padStart(5)}%`;
  const perRequest = summary.busy_us_per_request === null ? '' : `, ${summary.busy_us_per_request.toFixed(0)} µs busy per request`;
  write(`${summary.samples} busy samples, idle ${(summary.idle_share * 100).toFixed(1)}% of the window${perRequest}\n\nby area (self):\n`);
  for (const entry of summary.areas) write(`  ${pct(entry.share)}  ${entry.name}\n`);
  write('\nby function (self):\n');
  for (const entry of summary.self) write(`  ${pct(entry.share)}  ${entry.name}\n`);
  write('\nby function (inclusive):\n');
  for (const entry of summary.inclusive) write(`  ${pct(entry.share)}  ${entry.name}\n`);
}

/**
 * Bytes allocated per request by function and area, from a sampling heap profile taken with
 * the objects collected since included (so it counts every allocation, not what survived).
 */
export function summarizeAllocations(profile, requests) {
  const byFunction = new Map();
  const areas = new Map();
  let total = 0;
  const visit = (node) => {
    if (node.selfSize > 0) {
      total += node.selfSize;
      const name = label(node);
      byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
      const area = areaOf(node.callFrame.url);
      areas.set(area, (areas.get(area) ?? 0) + node.selfSize);
    }
    for (const child of node.children ?? []) visit(child);
  };
  visit(profile.head);
  const top = (map, count) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, bytes]) => ({ name, bytes_per_request: bytes / requests }));
  return { bytes_per_request: total / requests, areas: top(areas, 20), functions: top(byFunction, 40) };
}

export function printAllocations(summary, write = (text) => process.stdout.write(text)) {
  const size = (bytes) => `${(bytes / 1024).toFixed(2).padStart(7)} KiB`;
  write(`${size(summary.bytes_per_request)} allocated per request (sampled)\n\nby area:\n`);
  for (const entry of summary.areas) write(`  ${size(entry.bytes_per_request)}  ${entry.name}\n`);
  write('\nby function:\n');
  for (const entry of summary.functions) write(`  ${size(entry.bytes_per_request)}  ${entry.name}\n`);
}
