/**
 * Builds the `subagent-otel` command as one bundled ES module
 * (`dist/cli/subagent-otel.js`, the package's `bin`), run by `npm run build`
 * after `tsc`. The bundle is the CLI's alone: the library entry stays
 * `dist/index.js` (tsc output, with `.d.ts`) for in-process users.
 *
 * Why a bundle: the proxy is started once per agent process, and resolving
 * and compiling hundreds of small files of the OpenTelemetry packages cost
 * more than everything else the proxy does for a short session (decision
 * 0033). Choices:
 * - ESM with code splitting, so every `await import(...)` of the sources
 *   (commands, exporters, protocol trackers) stays a separate chunk loaded
 *   only when configured; chunks go to `dist/cli/chunks/`, one level below
 *   the entry, which keeps the paths the sources compute from
 *   `import.meta.url` (`../../package.json` from the entry, `../../fixtures/`
 *   from the demo's chunk) pointing where they point in the tsc output.
 * - `mainFields: module,main`: the ESM builds of the OpenTelemetry packages
 *   (smaller, and they tree-shake).
 * - A `createRequire` banner: the CommonJS Prometheus exporter `require`s
 *   Node built-ins, which an ES module has no `require` for. esbuild puts
 *   the banner on every chunk, so it is lazy: a chunk creates its `require`
 *   on the first call (only the Prometheus exporter's ever does), not at
 *   load, where each one would cost the proxy's start a URL-to-path
 *   conversion for nothing.
 * - Minified (names kept, for stack traces and anything that reads a class
 *   name): V8 compiles every byte of a chunk when it loads, and the proxy's
 *   observation chunk loads while the agent starts; minifying halves it.
 *   Linked source maps beside each chunk give readable stacks under
 *   `node --enable-source-maps`.
 * - The entry is `src/cli/bin.ts`, which imports nothing statically: it
 *   checks the Node version, turns on Node's compile cache, then imports
 *   the CLI (`main.ts`, a second entry at `dist/cli/main.js`) (decisions 0060, 0061).
 * - `@grpc/grpc-js` stays outside the bundle (`EXTERNAL` of
 *   `bundle-externals.mjs`), a runtime dependency Node loads from
 *   `node_modules`: the gRPC exporter base reaches it both by `import`
 *   (which esbuild would bundle) and by a `createRequire` call at run time
 *   (which it cannot see), and two copies of its classes refuse each
 *   other's credentials (decision 0091). After the build, `bundleProblems`
 *   fails it when a bundled package `require`s at run time a package that
 *   is not external, the shape of that bug, or when an external package's
 *   code is in a chunk.
 *
 * - `replay --jobs`' worker thread (`src/replay/replay-worker.ts`) is a third
 *   entry, written among the chunks (`dist/cli/chunks/replay-worker.js`), so
 *   the pool's chunk finds it at `./replay-worker.js` as in the tsc output.
 *
 * - The `view` command's page (`src/view/page/`) is a second, browser
 *   build: one script and one style sheet in `dist/view/page/`, with its
 *   npm dependencies (Chart.js) inside, so the page needs no network and
 *   the packed package no browser-side dependency (decision 0115).
 *
 * Usage: `node scripts/bundle-cli.mjs` (from the repository root).
 * Prints nothing on success; esbuild's warnings and errors go to stderr;
 * a guard failure lists each problem on stderr and exits 1.
 *
 * @module subagent-otel/scripts/bundle-cli
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { EXTERNAL, bundleProblems } from './bundle-externals.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT_DIR = fileURLToPath(new URL('../dist/cli/chunks/', import.meta.url));

// Chunk names carry content hashes: remove the previous build's so stale chunks never ship.
rmSync(OUT_DIR, { recursive: true, force: true });

const result = await build({
  absWorkingDir: ROOT,
  // `main` is an entry of its own, written over tsc's `dist/cli/main.js`: the path it reads the package
  // version from (`../../package.json`) holds there, where a chunk one level down would miss it.
  // The replay worker's entry sits among the chunks: the pool's chunk finds it beside itself
  // (`./replay-worker.js`), as `dist/replay/transcript-pool.js` finds tsc's `dist/replay/replay-worker.js`.
  entryPoints: [
    { in: 'src/cli/bin.ts', out: 'subagent-otel' },
    { in: 'src/cli/main.ts', out: 'main' },
    { in: 'src/replay/replay-worker.ts', out: 'chunks/replay-worker' },
  ],
  outdir: 'dist/cli',
  chunkNames: 'chunks/[name]-[hash]',
  entryNames: '[dir]/[name]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  mainFields: ['module', 'main'],
  external: [...EXTERNAL, ...EXTERNAL.map((name) => `${name}/*`)],
  metafile: true,
  banner: {
    js: "import { createRequire as __subagentOtelCreateRequire } from 'node:module'; let __subagentOtelRequire; const require = (id) => (__subagentOtelRequire ??= __subagentOtelCreateRequire(import.meta.url))(id);",
  },
  minify: true,
  keepNames: true,
  legalComments: 'none',
  sourcemap: 'linked',
  logLevel: 'warning',
});

// The view page: everything the browser loads, from the sources and the npm packages they import.
await build({
  absWorkingDir: ROOT,
  entryPoints: [
    { in: 'src/view/page/main.ts', out: 'page' },
    { in: 'src/view/page/page.css', out: 'page' },
  ],
  outdir: 'dist/view/page',
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['chrome120', 'firefox120', 'safari17'],
  minify: true,
  // Chart.js's licence notice stays with its code in the bundle.
  legalComments: 'eof',
  logLevel: 'warning',
});

const problems = bundleProblems(result.metafile, ROOT);
if (problems.length > 0) {
  process.stderr.write(`bundle-cli: a second way to a package (decision 0091):\n  ${problems.join('\n  ')}\n`);
  process.exitCode = 1;
}
