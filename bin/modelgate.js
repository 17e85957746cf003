#!/usr/bin/env -S node --max-semi-space-size=4
// The package's bin: runs the compiled CLI (built by `npm install` through the prepare script).
// The flag on the first line caps V8's young generation at 2 × 4 MiB (default 2 × 16 MiB):
// ~20 MB less resident memory and a flat RSS under steady load, for some CPU on requests that
// allocate a lot (docs/performance.md, Memory). V8 reads it only at start-up, hence here.
// Workers forked by `serve --workers` inherit it. `npm start` and `npx modelgate` run this file
// through that line; a launcher that calls `node bin/modelgate.js` itself should pass it too.
import '../dist/cli/main.js';
