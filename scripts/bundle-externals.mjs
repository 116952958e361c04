/**
 * Which packages the CLI bundle leaves to Node (`EXTERNAL`), and the guard
 * that a bundle reaches every package one way only (`bundleProblems`).
 * Used by `scripts/bundle-cli.mjs` after each build, and by
 * `test/scripts/bundle-externals.test.ts`.
 *
 * The bug it guards against (decision 0091): a bundled package that
 * imports a package statically (esbuild bundles that copy) and also calls
 * `__require("<it>")` through `createRequire(import.meta.url)` at run time
 * (esbuild cannot see it; Node loads a second copy from `node_modules`).
 * The two copies' classes do not know each other: the gRPC exporter base
 * made credentials with one copy of `@grpc/grpc-js` and handed them to a
 * client class of the other, which refused them.
 *
 * @module subagent-otel/scripts/bundle-externals
 */
import { readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';

/**
 * Packages Node loads from `node_modules` at run time instead of the bundle
 * (each a `dependency` in package.json, so it resolves from
 * `dist/cli/chunks/` in an installed package): one instance for every way
 * the bundled code reaches it.
 */
export const EXTERNAL = Object.freeze(['@grpc/grpc-js']);

/** The package a bare specifier names (`@scope/name/sub` -> `@scope/name`), or undefined for a relative or absolute one. */
function packageOf(specifier) {
  if (specifier.startsWith('.') || specifier.startsWith('/')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The package an input path of esbuild's metafile belongs to (after its last `node_modules/`), or undefined for the project's own sources. */
function packageOfInput(path) {
  const at = path.lastIndexOf('node_modules/');
  return at === -1 ? undefined : packageOf(path.slice(at + 'node_modules/'.length));
}

/**
 * `__require("<specifier>")` calls: the helper that rolldown-, tsdown- and
 * esbuild-built packages make with `createRequire(import.meta.url)`, which
 * Node resolves at run time from the chunk's location. esbuild bundles a
 * plain `require("x")` itself; these it leaves alone.
 */
const RUNTIME_REQUIRE = /\b__require\(\s*["']([^"']+)["']\s*\)/g;

/**
 * The second ways to a package in a bundle, one sentence each: a bundled
 * package input that `__require`s at run time a package that is not
 * external (Node would load a copy beside the bundled one, or fail where
 * none is installed), and each external package whose code is in a chunk
 * anyway. Built-in modules are exempt.
 *
 * @param metafile esbuild's metafile (only `inputs` is read: paths relative to `root`)
 * @param root the directory the input paths are relative to (the build's `absWorkingDir`)
 * @param external the packages left to Node (default `EXTERNAL`)
 * @returns an empty list when every package is reached one way. Never throws
 *   for a well-formed metafile; reads the input files, writes nothing.
 */
export function bundleProblems(metafile, root, external = EXTERNAL) {
  const problems = new Set();
  const bundledExternals = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const owner = packageOfInput(input);
    if (owner === undefined) continue;
    if (external.includes(owner)) bundledExternals.add(owner);
    for (const [, specifier] of readFileSync(join(root, input), 'utf8').matchAll(RUNTIME_REQUIRE)) {
      const target = packageOf(specifier);
      if (target === undefined || isBuiltin(specifier) || external.includes(target)) continue;
      problems.add(
        `${input} requires ${specifier} at run time, which is bundled or missing: add ${target} to EXTERNAL in scripts/bundle-externals.mjs (and to dependencies)`,
      );
    }
  }
  for (const name of bundledExternals) problems.add(`code of ${name} is in a chunk, but ${name} is external`);
  return [...problems];
}
