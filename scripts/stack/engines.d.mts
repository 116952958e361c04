/**
 * Types of engines.mjs (plain JavaScript, run without a build), for the
 * TypeScript tests and the vitest config that import it.
 *
 * @module subagent-otel/scripts/stack/engines
 */

/** One engine built from a Go module under collector-config/. */
export interface Engine {
  readonly name: 'subagent-otelcol' | 'jaeger' | 'prometheus';
  readonly version: string;
  readonly module: string;
  readonly packages: readonly string[];
  readonly binaries: readonly string[];
  readonly output: string;
  readonly tags: string;
  readonly ldflags: string;
}

export declare const ROOT: string;
export declare const ENGINES: readonly Engine[];
export declare const INSTALL: { readonly go: string; readonly alertmanager: string; readonly build: string };
export declare function cacheRoot(env?: NodeJS.ProcessEnv): string;
export declare function engineDir(engine: Engine, env?: NodeJS.ProcessEnv): string;
export declare function sourceHash(engine: Engine): string;
export declare function isBuilt(engine: Engine, env?: NodeJS.ProcessEnv): boolean;
/** Path of a built binary; throws naming `npm run stack -- build` when missing or stale. */
export declare function binary(binaryName: string, env?: NodeJS.ProcessEnv): string;
export declare function onPath(names: readonly string[], env?: NodeJS.ProcessEnv): string | undefined;
/** Throws "go not found on PATH: <how to install>" when Go is missing. */
export declare function goTool(env?: NodeJS.ProcessEnv): { go: string; version: string };
export declare function buildEngine(
  engine: Engine,
  options?: { log?: (line: string) => void; env?: NodeJS.ProcessEnv },
): Promise<number>;
export declare function ensureEngines(options?: {
  log?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  names?: readonly string[];
}): Promise<Record<string, number | 'reused'>>;
export declare function alertmanagerBinary(env?: NodeJS.ProcessEnv): string;
export declare const exists: (path: string) => boolean;
