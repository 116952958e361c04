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
 * - The proxy's observation a second time, as one CommonJS file
 *   (`chunks/observation-<hash>.cjs`, every dynamic import of it inlined):
 *   the proxy runs it through `vm.Script` with a V8 code cache, which Node
 *   20 has for scripts but not for ES modules (decision 0040). The entry
 *   learns its name through a `define`.
 *
 * Usage: `node scripts/bundle-cli.mjs` (from the repository root).
 * Prints nothing on success; esbuild's warnings and errors go to stderr.
 *
 * @module subagent-otel/scripts/bundle-cli
 */
import { readFileSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT_DIR = fileURLToPath(new URL('../dist/cli/chunks/', import.meta.url));

// Chunk names carry content hashes: remove the previous build's so stale chunks never ship.
rmSync(OUT_DIR, { recursive: true, force: true });

// The proxy's observation once more, as one CommonJS file that `cli/code-cache.ts` runs through
// `vm.Script` with a V8 code cache (decision 0040). Its name carries its content hash, which keys the cache.
/**
 * A dynamic `import()` of a built-in module in the CommonJS file becomes a `require` (in a promise):
 * Node 20 loses a `vm.Script`'s dynamic-import callback when the script comes from a code cache,
 * so an `import()` left in it would fail (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING).
 */
const builtinImportsAsRequire = {
  name: 'builtin-imports-as-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
      if (args.kind !== 'dynamic-import' || !isBuiltin(args.path)) return undefined;
      return { path: args.path, namespace: 'builtin-require' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin-require' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

const observation = await build({
  absWorkingDir: ROOT,
  entryPoints: { observation: 'src/cli/commands/proxy-observation.ts' },
  outdir: 'dist/cli/chunks',
  entryNames: '[name]-[hash]',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  mainFields: ['module', 'main'],
  minify: true,
  keepNames: true,
  legalComments: 'none',
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
  // A CommonJS file has no `import.meta`: code of the observation that needs it must fail the build, not run without it.
  logOverride: { 'empty-import-meta': 'error' },
  plugins: [builtinImportsAsRequire],
});
const observationFile = Object.keys(observation.metafile.outputs).find((file) => file.endsWith('.cjs'));
if (observationFile === undefined) throw new Error('bundle-cli: the observation bundle was not written');
if (/\bimport\(/.test(readFileSync(join(ROOT, observationFile), 'utf8'))) {
  throw new Error(`bundle-cli: ${observationFile} still has a dynamic import(), which fails when it runs from the code cache (decision 0040)`);
}

await build({
  absWorkingDir: ROOT,
  entryPoints: { 'subagent-otel': 'src/cli/main.ts' },
  define: { SUBAGENT_OTEL_OBSERVATION_BUNDLE: JSON.stringify(basename(observationFile)) },
  outdir: 'dist/cli',
  chunkNames: 'chunks/[name]-[hash]',
  entryNames: '[name]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  mainFields: ['module', 'main'],
  banner: {
    js: "import { createRequire as __subagentOtelCreateRequire } from 'node:module'; let __subagentOtelRequire; const require = (id) => (__subagentOtelRequire ??= __subagentOtelCreateRequire(import.meta.url))(id);",
  },
  minify: true,
  keepNames: true,
  legalComments: 'none',
  sourcemap: 'linked',
  logLevel: 'warning',
});
