// The lint's layer check: no import cycle between the domains of src/ (a folder each), type
// imports included. ESLint's import-x/no-cycle follows values only, so a type loop between
// two domains (each naming the other's types) passes it; this check fails on one.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';

/** The source tree: src/ of the project, or the folder given (the check's own test). */
const SRC = resolve(process.argv[2] ?? join(import.meta.dirname, '..', 'src'));

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const domainOf = (file) => relative(SRC, file).split(sep)[0];
/** Domain → the domains it imports (any import: values, types, re-exports), with one file that does. */
const edges = new Map();
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/g;

for (const file of sourceFiles(SRC)) {
  const from = domainOf(file);
  if (from.endsWith('.ts')) continue;
  const text = readFileSync(file, 'utf8');
  for (const match of text.matchAll(IMPORT)) {
    const target = resolve(dirname(file), match[1]);
    if (!target.startsWith(SRC + sep)) continue;
    const to = domainOf(target);
    if (to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, relative(SRC, file));
  }
}

// Depth-first search for a cycle; each one found is reported once, by its domains and a file per step.
const cycles = [];
const state = new Map();
function visit(domain, path) {
  state.set(domain, 'open');
  for (const next of edges.get(domain)?.keys() ?? []) {
    if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), domain, next]);
    else if (!state.has(next)) visit(next, [...path, domain]);
  }
  state.set(domain, 'done');
}
for (const domain of edges.keys()) if (!state.has(domain)) visit(domain, []);

if (cycles.length > 0) {
  for (const cycle of cycles) {
    const steps = cycle.slice(0, -1).map((domain, index) => `${domain} → ${cycle[index + 1]} (${edges.get(domain).get(cycle[index + 1])})`);
    console.error(`import cycle between domains:\n  ${steps.join('\n  ')}`);
  }
  process.exit(1);
}
