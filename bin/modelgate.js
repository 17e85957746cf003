#!/usr/bin/env node
// The package's bin: runs the compiled CLI (built by `npm install` through the prepare script).
// `npm start` runs it as `node --max-semi-space-size=4 bin/modelgate.js serve`: a young
// generation of 2 × 4 MiB instead of 2 × 16 MiB, ~20 MB less resident memory for some CPU on
// requests that allocate a lot (docs/performance.md, Memory). V8 reads that flag only at
// start-up, and `#!/usr/bin/env -S node …` is not portable (BusyBox env on Alpine has no -S),
// so the flag is on the command line, not here. `serve --workers` children inherit it.
import '../dist/cli/main.js';
