// callgrind_annotate's listing with JIT-compiled JavaScript named. callgrind names native code
// only; node started with --perf-basic-prof writes /tmp/perf-<pid>.map, the address range and
// name of every piece of code it compiles, and this puts those names in place of the `???`
// addresses.
//
//   BENCH_NODE_ARGS=--perf-basic-prof BENCH_CALLGRIND_KEEP=1 npm run bench:instructions -- stream
//   node bench/callgrind-names.mjs <kept dir>/callgrind.<pid>.1 [/tmp/perf-<pid>.map] [callgrind_annotate options…]
//
// The map defaults to the one of the pid in the callgrind file's name. Code that V8 moved or
// replaced keeps its last name at an address: a name is the newest whose range holds it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const [callgrindFile, ...rest] = process.argv.slice(2);
// The map is optional: an argument that starts with `--` is one of callgrind_annotate's options.
const mapArgument = rest[0]?.startsWith('--') ? undefined : rest[0];
const annotateOptions = mapArgument === undefined ? rest : rest.slice(1);
if (callgrindFile === undefined) throw new Error('usage: node bench/callgrind-names.mjs <callgrind file> [perf map] [callgrind_annotate options…]');
const pid = /callgrind\.(\d+)/.exec(basename(callgrindFile))?.[1];
const mapFile = mapArgument ?? `/tmp/perf-${pid}.map`;

/** [start, end, name] of every code object in the map, in the order node wrote them. */
const ranges = readFileSync(mapFile, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const [start, size, ...name] = line.split(' ');
    const from = Number.parseInt(start, 16);
    return [from, from + Number.parseInt(size, 16), name.join(' ')];
  });

function nameOf(address) {
  for (let index = ranges.length - 1; index >= 0; index -= 1) {
    const [start, end, name] = ranges[index];
    if (address >= start && address < end) return name;
  }
  return undefined;
}

const listing = execFileSync('callgrind_annotate', [...annotateOptions, callgrindFile], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
// `???:0x… [???]`, with the call count between in the trees (`--tree=caller|calling`).
process.stdout.write(
  listing.replace(/\?\?\?:0x([0-9a-f]+)( \([\d,]+x\))? \[\?\?\?\]/g, (unnamed, hex, calls = '') => {
    const name = nameOf(Number.parseInt(hex, 16));
    return name === undefined ? unnamed : `${name}${calls}`;
  }),
);
