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
 * - `@grpc/grpc-js` stays outside the bundle (`EXTERNAL`), a runtime
 *   dependency Node loads from `node_modules`: the gRPC exporter base
 *   reaches it both by `import` (which esbuild would bundle) and by a
 *   `createRequire` call at run time (which it cannot see), and two copies
 *   of its classes refuse each other's credentials (decision 0091). After
 *   the build, `assertOneWayToEachPackage` fails it when a bundled package
 *   `require`s at run time a package that is not external, the shape of
 *   that bug, or when an external package's code is in a chunk.
 *
 * Usage: `node scripts/bundle-cli.mjs` (from the repository root).
 * Prints nothing on success; esbuild's warnings and errors go to stderr;
 * a guard failure is one line on stderr and exit code 1.
 *
 * @module subagent-otel/scripts/bundle-cli
 */
import { readFileSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT_DIR = fileURLToPath(new URL('../dist/cli/chunks/', import.meta.url));

/**
 * Packages Node loads from `node_modules` at run time instead of the bundle
 * (each a `dependency` in package.json): one instance for every way the
 * bundled code reaches it (decision 0091).
 */
const EXTERNAL = Object.freeze(['@grpc/grpc-js']);

/** The package a bare specifier names (`@scope/name/sub` -> `@scope/name`), or undefined for a relative one. */
function packageOf(specifier) {
  if (specifier.startsWith('.') || specifier.startsWith('/')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The package an input path of esbuild's metafile belongs to (the last `node_modules/` segment), or undefined for our own sources. */
function packageOfInput(path) {
  const at = path.lastIndexOf('node_modules/');
  return at === -1 ? undefined : packageOf(path.slice(at + 'node_modules/'.length));
}

/**
 * `__require("<package>")` calls of bundled package code: the helper that
 * rolldown-, tsdown- and esbuild-built packages make with
 * `createRequire(import.meta.url)`, which resolves at run time from the
 * chunk's location. esbuild bundles plain `require("x")` itself; these it
 * leaves to Node.
 */
const RUNTIME_REQUIRE = /\b__require\(\s*["']([^"']+)["']\s*\)/g;

/**
 * Throws when the bundle has a second way to a package: a bundled input
 * that `__require`s at run time a package that is not in `EXTERNAL` (Node
 * would load a copy from `node_modules` beside the bundled one, or fail
 * where none is installed), or an `EXTERNAL` package whose code is in a
 * chunk anyway. Built-in modules are exempt. Never writes anything.
 */
function assertOneWayToEachPackage(metafile) {
  const problems = new Set();
  const bundledExternals = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const owner = packageOfInput(input);
    if (owner === undefined) continue;
    if (EXTERNAL.includes(owner)) bundledExternals.add(owner);
    for (const [, specifier] of readFileSync(join(ROOT, input), 'utf8').matchAll(RUNTIME_REQUIRE)) {
      const target = packageOf(specifier);
      if (target === undefined || isBuiltin(specifier) || EXTERNAL.includes(target)) continue;
      problems.add(`${input} requires ${specifier} at run time, which is not external: add ${target} to EXTERNAL (and to dependencies)`);
    }
  }
  for (const name of bundledExternals) problems.add(`code of ${name} is in a chunk, but ${name} is external`);
  if (problems.size > 0) throw new Error(`bundle-cli: a second way to a package (decision 0091):\n  ${[...problems].join('\n  ')}`);
}

// Chunk names carry content hashes: remove the previous build's so stale chunks never ship.
rmSync(OUT_DIR, { recursive: true, force: true });

const result = await build({
  absWorkingDir: ROOT,
  // `main` is an entry of its own, written over tsc's `dist/cli/main.js`: the path it reads the package
  // version from (`../../package.json`) holds there, where a chunk one level down would miss it.
  entryPoints: { 'subagent-otel': 'src/cli/bin.ts', main: 'src/cli/main.ts' },
  outdir: 'dist/cli',
  chunkNames: 'chunks/[name]-[hash]',
  entryNames: '[name]',
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

try {
  assertOneWayToEachPackage(result.metafile);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
