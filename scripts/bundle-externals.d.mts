/**
 * Types of bundle-externals.mjs (plain JavaScript, run without a build), for
 * the TypeScript tests that import it.
 *
 * @module subagent-otel/scripts/bundle-externals
 */

/** Packages the CLI bundle leaves to Node, loaded from `node_modules` at run time. */
export declare const EXTERNAL: readonly string[];

/** The part of esbuild's metafile the guard reads: input paths relative to the build's root. */
export interface BundleInputs {
  readonly inputs: Readonly<Record<string, unknown>>;
}

/** The second ways to a package in a bundle, one sentence each; empty when there are none. */
export declare function bundleProblems(metafile: BundleInputs, root: string, external?: readonly string[]): string[];
