#!/usr/bin/env -S node --max-semi-space-size=4
// The package's bin: runs the compiled CLI (built by `npm install` through the prepare script).
// The flag on the first line caps V8's young generation at 2 × 4 MiB (default 2 × 16 MiB): the
// gateway's garbage is short-lived requests, and measured side by side it costs no CPU per
// request while holding ~20 MB less resident memory (docs/performance.md). Workers forked by
// `serve --workers` inherit it. `npm start` and `npx modelgate` run this file through that line;
// a launcher that calls `node bin/modelgate.js` itself should pass the flag too.
import '../dist/cli/main.js';
