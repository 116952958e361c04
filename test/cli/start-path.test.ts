/**
 * What `subagent-otel proxy` loads before it spawns the agent, read from the
 * bundle as it ships (`npm test` builds it first): the entry
 * `dist/cli/subagent-otel.js` (the Node version check), and the static
 * import closures of the two modules it imports, one after the other, before
 * the CLI runs (the compile-cache switch and `dist/cli/main.js`): every file
 * of which Node loads and evaluates before the first line of `main` runs. The sources each chunk was
 * built from are read from its source map. Decision 0039: nothing of the
 * observation (OpenTelemetry, zod, the telemetry setup, `node:crypto`,
 * `node:http`) may be in it; it comes in one dynamic `import()` after the spawn.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, ROOT } from '../helpers/paths.js';

/** Relative specifiers of static `import ... from`, `import "..."` and `export ... from` statements (not `import(...)`). */
const STATIC_RELATIVE = /(?:\bimport|\bexport)\s*(?:[\w$*\s,{}]*?\bfrom\s*)?["'](\.{1,2}\/[^"']+)["']/g;
/** Built-in modules named by static imports. */
const STATIC_BUILTIN = /\bimport\s*(?:[\w$*\s,{}]*?\bfrom\s*)?["'](node:[\w/]+)["']/g;
/** Bare specifiers of static imports: packages the bundle leaves to Node (decision 0091), or built-ins named without `node:`. */
const STATIC_PACKAGE = /\bimport\s*(?:[\w$*\s,{}]*?\bfrom\s*)?["']((?!\.{1,2}\/|node:)[^"']+)["']/g;
/** Relative specifiers of dynamic `import("...")`. */
const DYNAMIC_RELATIVE = /\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

interface Closure {
  /** Bundle files, relative to the repository. */
  readonly files: readonly string[];
  /** Source files the closure was built from (from the source maps), relative to the repository. */
  readonly sources: readonly string[];
  readonly builtins: ReadonlySet<string>;
  /** Packages imported statically from `node_modules` (left out of the bundle). */
  readonly packages: ReadonlySet<string>;
  /** Files the closure imports dynamically, relative to the repository. */
  readonly dynamic: ReadonlySet<string>;
}

function staticClosure(entry: string): Closure {
  const files: string[] = [];
  const sources = new Set<string>();
  const builtins = new Set<string>();
  const packages = new Set<string>();
  const dynamic = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (files.includes(file)) continue;
    files.push(file);
    const code = readFileSync(file, 'utf8');
    for (const [, specifier] of code.matchAll(STATIC_RELATIVE)) pending.push(join(dirname(file), specifier as string));
    for (const [, specifier] of code.matchAll(STATIC_BUILTIN)) builtins.add(specifier as string);
    for (const [, specifier] of code.matchAll(STATIC_PACKAGE))
      if (!isBuiltin(specifier as string)) packages.add(specifier as string);
    for (const [, specifier] of code.matchAll(DYNAMIC_RELATIVE))
      dynamic.add(relative(ROOT, join(dirname(file), specifier as string)));
    const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
    for (const source of map.sources) sources.add(relative(ROOT, join(dirname(file), source)));
  }
  return { files: files.map((f) => relative(ROOT, f)), sources: [...sources].sort(), builtins, packages, dynamic };
}

/** The hook's chunk: the entry imports it instead of `main` for `subagent-otel hook` (decision 0123), never on the proxy's path. */
const HOOK_CHUNK = /^dist\/cli\/chunks\/run-hook-[\w-]+\.js$/;

/** The entry's closure and the closures of the modules it imports dynamically (all awaited before `main` runs). */
function startPath(entry: string): Closure {
  const first = staticClosure(entry);
  const parts = [
    first,
    ...[...first.dynamic].filter((file) => !HOOK_CHUNK.test(file)).map((file) => staticClosure(join(ROOT, file))),
  ];
  const files = [...new Set(parts.flatMap((part) => part.files))];
  const sources = [...new Set(parts.flatMap((part) => part.sources))].sort();
  const builtins = new Set(parts.flatMap((part) => [...part.builtins]));
  const packages = new Set(parts.flatMap((part) => [...part.packages]));
  // Only what the later parts import dynamically is left for after the spawn.
  const dynamic = new Set(parts.slice(1).flatMap((part) => [...part.dynamic]));
  return { files, sources, builtins, packages, dynamic };
}

describe('the start path of the bundled CLI', () => {
  const closure = startPath(CLI);

  it('starts with the Node version check, which imports nothing statically, then the compile cache and main', () => {
    const entry = staticClosure(CLI);
    expect(entry.files).toEqual(['dist/cli/subagent-otel.js']);
    expect(entry.sources).toEqual(['src/cli/bin.ts']);
    // Only the bundle's banner (`createRequire`, in every Node since 12): nothing an old Node cannot link.
    expect([...entry.builtins]).toEqual(['node:module']);
    expect([...entry.dynamic].sort()).toEqual([
      expect.stringMatching(/^dist\/cli\/chunks\/compile-cache-[\w-]+\.js$/),
      expect.stringMatching(HOOK_CHUNK),
      'dist/cli/main.js',
    ]);
  });

  it('runs a hook without the CLI: no package code, nothing of telemetry, observation or the command line', () => {
    const hook = [...staticClosure(CLI).dynamic].find((file) => HOOK_CHUNK.test(file)) as string;
    const loaded = staticClosure(join(ROOT, hook));
    expect(loaded.sources).toContain('src/hooks/run-hook.ts');
    expect(loaded.sources.filter((source) => source.includes('node_modules/'))).toEqual([]);
    expect(loaded.sources.filter((source) => /^src\/(cli|telemetry|observe|transcripts|watch)\//.test(source))).toEqual(
      [],
    );
    expect([...loaded.dynamic]).toEqual([]);
  });

  it('is read from real files: the entry and its chunks, with the proxy command and the bridge in it', () => {
    expect(closure.files[0]).toBe('dist/cli/subagent-otel.js');
    expect(closure.sources).toContain('src/cli/main.ts');
    expect(closure.sources).toContain('src/cli/compile-cache.ts');
    expect(closure.sources).toContain('src/cli/commands/proxy-command.ts');
    expect(closure.sources).toContain('src/proxy/run-proxy.ts');
    expect(closure.sources).toContain('src/proxy/stdio-proxy.ts');
    expect(closure.sources).toContain('src/proxy/os-pipes.ts');
    expect(closure.sources).toContain('src/backend/parent-death.ts');
  });

  it('holds no package code at all: no OpenTelemetry, no zod, no ACP SDK, and imports no package left to Node', () => {
    expect(closure.sources.filter((source) => source.includes('node_modules/'))).toEqual([]);
    expect([...closure.packages]).toEqual([]);
  });

  it('holds nothing of the observation: of telemetry only the configuration table, nothing of observe/ or wire/', () => {
    expect(closure.sources.filter((source) => source.startsWith('src/telemetry/'))).toEqual([
      'src/telemetry/config.ts',
    ]);
    expect(closure.sources.filter((source) => /^src\/(observe|wire|output|replay)\//.test(source))).toEqual([]);
    expect(closure.sources).not.toContain('src/proxy/proxy-observation.ts');
    expect(closure.sources).not.toContain('src/cli/telemetry-options.ts');
    // proxy --agent-telemetry (receiver, join, forwarding) loads only with its flag.
    expect(closure.sources.filter((source) => source.startsWith('src/proxy/agent-telemetry'))).toEqual([]);
  });

  it('loads no built-in module the spawn does not need (no crypto, http, zlib, worker threads)', () => {
    expect([...closure.builtins].sort()).toEqual([
      'node:child_process',
      'node:fs',
      'node:module',
      'node:net',
      'node:os',
      'node:path',
      'node:util',
      'node:v8',
    ]);
  });

  /** The observation's chunk: imported by the proxy command after the spawn (decision 0039). */
  function observationChunk(): string | undefined {
    return [...closure.dynamic].find((file) => /^dist\/cli\/chunks\/proxy-observation-[\w-]+\.js$/.test(file));
  }

  it('reaches the observation by a dynamic import, which brings the telemetry SDK with it', () => {
    const observation = observationChunk();
    expect(observation).toBeDefined();
    const loaded = staticClosure(join(ROOT, observation as string));
    expect(loaded.sources).toContain('src/telemetry/setup.ts');
    expect(loaded.sources.some((source) => source.includes('node_modules/@opentelemetry/sdk-trace/'))).toBe(true);
  });

  it('loads, with the observation, no exporter that is not configured: no OTLP exporter, no Prometheus package, no node:http', () => {
    const observation = observationChunk() as string;
    const loaded = staticClosure(join(ROOT, observation));
    expect(
      loaded.sources.filter((source) =>
        /node_modules\/@opentelemetry\/(exporter-|otlp-exporter-base|otlp-grpc)/.test(source),
      ),
    ).toEqual([]);
    expect(loaded.sources.filter((source) => source.includes('node_modules/@grpc/'))).toEqual([]);
    // grpc-js is outside the bundle (decision 0091): the observation must not import it from node_modules either.
    expect([...loaded.packages]).toEqual([]);
    expect(loaded.builtins.has('node:http')).toBe(false);
    expect(loaded.builtins.has('node:https')).toBe(false);
  });

  it('loads, with the observation, only the parts of zod its validators reach: no locale but English, no JSON Schema reader', () => {
    // One `import { z } from 'zod'` anywhere in the bundle puts all of zod (about 360 KB more) in the shared chunk.
    const loaded = staticClosure(join(ROOT, observationChunk() as string));
    expect(loaded.sources.some((source) => source.includes('node_modules/zod/'))).toBe(true);
    expect(
      loaded.sources.filter((source) => /node_modules\/zod\/(.*\/locales\/(?!en\.js)|.*from-json-schema)/.test(source)),
    ).toEqual([]);
  });

  it('has loaded every built-in module the observation imports statically before the observation loads (decision 0122)', () => {
    // Loaded under a V8 flag, a built-in is compiled from source: the proxy loads them first, then holds TurboFan.
    // node:buffer: Node loads it itself before any module runs (the Buffer global).
    const loadedFirst = new Set([...closure.builtins, 'node:buffer']);
    for (const file of closure.files) {
      for (const [, specifier] of readFileSync(join(ROOT, file), 'utf8').matchAll(
        /\bimport\(\s*["'](node:[\w/]+)["']\s*\)/g,
      ))
        loadedFirst.add(specifier as string);
    }
    expect(loadedFirst.has('node:crypto')).toBe(true);
    const loaded = staticClosure(join(ROOT, observationChunk() as string));
    expect([...loaded.builtins].filter((builtin) => !loadedFirst.has(builtin))).toEqual([]);
  });

  it('sees a package import where there is one: the gRPC exporter chunk imports @grpc/grpc-js from node_modules', () => {
    const chunks = join(ROOT, 'dist', 'cli', 'chunks');
    const grpc = readdirSync(chunks).filter(
      (name) => name.endsWith('.js') && readFileSync(join(chunks, name), 'utf8').includes('"@grpc/grpc-js"'),
    );
    expect(grpc).toHaveLength(1);
    expect([...staticClosure(join(chunks, grpc[0] as string)).packages]).toEqual(['@grpc/grpc-js']);
  });
});
