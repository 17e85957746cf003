#!/usr/bin/env node
// The package's bin: runs the compiled CLI (built by `npm install` through the prepare script).
// `npm start` runs it as `node --v8-pool-size=1 --max-semi-space-size=8 bin/modelgate.js serve`:
// one V8 helper thread instead of four (they only contend with the event loop when every core
// runs a worker), and a young generation of 2 × 8 MiB instead of 2 × 16 MiB (less resident
// memory) — docs/performance.md, "Node flags". Node reads both only at start-up, and
// `#!/usr/bin/env -S node …` is not portable (BusyBox env on Alpine has no -S), so the flags
// are on the command line, not here. `serve` started without them runs the server in a child
// process that has them (src/cli/node-flags.ts, decision 0017), decided before the CLI loads,
// so the launching process holds no more than node itself; `serve --workers` children inherit them.
import { relaunchWithNodeFlags } from '../dist/cli/node-flags.js';

if (!relaunchWithNodeFlags(process.argv.slice(2))) await import('../dist/cli/main.js');
