/**
 * The CLI bundle reaches every package one way (decision 0091). The gRPC
 * exporter base imports `@grpc/grpc-js` statically and also `__require`s it
 * through `createRequire(import.meta.url)` at run time; bundled, that was two
 * copies whose classes refused each other's credentials (#31). Read from the
 * bundle as it ships (`npm test` builds it first) and its source maps: no
 * code of grpc-js is in a chunk, and every chunk that names it names it as a
 * bare specifier Node resolves from `node_modules`, so both ways meet in one
 * module instance. `bundleProblems`, the guard `npm run build` runs on
 * esbuild's metafile, is checked on the gRPC exporters' input files with
 * and without grpc-js external.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXTERNAL, bundleProblems } from '../../scripts/bundle-externals.mjs';
import { ROOT } from '../helpers/paths.js';

const CLI_DIR = join(ROOT, 'dist', 'cli');

/** Every file the bundler wrote: the two entries and the chunks (tsc's other files in dist/cli/ have no chunk banner). */
function bundleFiles(): string[] {
  const entries = ['subagent-otel.js', 'main.js'].map((name) => join(CLI_DIR, name));
  const chunks = readdirSync(join(CLI_DIR, 'chunks'))
    .filter((name) => name.endsWith('.js'))
    .map((name) => join(CLI_DIR, 'chunks', name));
  return [...entries, ...chunks];
}

/** The sources a bundle file was built from, relative to the repository (from its source map). */
function sourcesOf(file: string): string[] {
  const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources.map((source) => relative(ROOT, join(dirname(file), source)));
}

/** Every file of `dir` (recursively) whose name ends in `.mjs`, relative to the repository. */
function moduleFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.mjs'))
    .map((name) => join(dir, name))
    .sort();
}

/**
 * The inputs esbuild reads for the gRPC exporters, as its metafile lists them: the ES modules of the gRPC
 * exporter base and of the exporter base it builds on (the source maps of the chunks name the packages'
 * TypeScript sources instead, which are not installed).
 */
function grpcExporterInputs(): { inputs: Record<string, unknown> } {
  const files = [
    ...moduleFiles('node_modules/@opentelemetry/otlp-grpc-exporter-base/dist'),
    ...moduleFiles('node_modules/@opentelemetry/otlp-exporter-base/dist'),
  ];
  return { inputs: Object.fromEntries(files.map((file) => [file, {}])) };
}

const GRPC = '"@grpc/grpc-js"';

/** How a chunk names `@grpc/grpc-js` at `at`: a static import, a call (a run-time require), or something else. */
function useAt(code: string, at: number): 'import' | 'call' | 'other' {
  const before = code.slice(Math.max(0, at - 200), at);
  if (/\bimport\s*[\w$*\s,{}]*?\bfrom\s*$/.test(before)) return 'import';
  if (/[\w$]\(\s*$/.test(before)) return 'call';
  return 'other';
}

describe('the shipped CLI bundle and @grpc/grpc-js', () => {
  it('leaves @grpc/grpc-js to Node: no chunk holds any file of it', () => {
    expect(EXTERNAL).toEqual(['@grpc/grpc-js']);
    const bundled = bundleFiles().flatMap((file) =>
      sourcesOf(file).filter((source) => source.includes('node_modules/@grpc/')),
    );
    expect(bundled).toEqual([]);
  });

  it('names it in one chunk, the gRPC exporter base, as a static import and as run-time requires only', () => {
    const naming = bundleFiles().filter((file) => readFileSync(file, 'utf8').includes(GRPC));
    expect(naming).toHaveLength(1);
    const chunk = naming[0] as string;
    expect(
      sourcesOf(chunk).some((source) => source.includes('node_modules/@opentelemetry/otlp-grpc-exporter-base/')),
    ).toBe(true);
    const code = readFileSync(chunk, 'utf8');
    const uses: string[] = [];
    for (let at = code.indexOf(GRPC); at !== -1; at = code.indexOf(GRPC, at + 1)) uses.push(useAt(code, at));
    // One `import * as grpc` (the client constructor), and the `__require` calls for credentials, metadata and status codes.
    expect(uses.filter((use) => use === 'import')).toHaveLength(1);
    expect(uses.filter((use) => use === 'call').length).toBeGreaterThanOrEqual(3);
    expect(uses.filter((use) => use === 'other')).toEqual([]);
  });

  it('loads that chunk by a dynamic import only, so nothing reaches grpc-js unless grpc is configured', () => {
    const chunk = bundleFiles().find((file) => readFileSync(file, 'utf8').includes(GRPC)) as string;
    const name = chunk.slice(chunk.lastIndexOf('/') + 1);
    const importers = bundleFiles().filter((file) => readFileSync(file, 'utf8').includes(`./${name}`));
    expect(importers.length).toBeGreaterThan(0);
    for (const importer of importers) {
      const code = readFileSync(importer, 'utf8');
      expect(code, relative(ROOT, importer)).toContain(`import("./${name}")`);
      expect(code.replaceAll(`import("./${name}")`, '')).not.toContain(`./${name}`);
    }
  });
});

describe('bundleProblems, the guard of npm run build', () => {
  it("finds no second way to a package in the gRPC exporters' inputs with @grpc/grpc-js external", () => {
    expect(Object.keys(grpcExporterInputs().inputs).length).toBeGreaterThan(10);
    expect(bundleProblems(grpcExporterInputs(), ROOT)).toEqual([]);
  });

  it('names the run-time requires of the gRPC exporter base when @grpc/grpc-js is not external (the bug of #31)', () => {
    const hint =
      'which is bundled or missing: add @grpc/grpc-js to EXTERNAL in scripts/bundle-externals.mjs (and to dependencies)';
    expect(bundleProblems(grpcExporterInputs(), ROOT, [])).toEqual([
      `node_modules/@opentelemetry/otlp-grpc-exporter-base/dist/grpc-exporter-transport.mjs requires @grpc/grpc-js at run time, ${hint}`,
      `node_modules/@opentelemetry/otlp-grpc-exporter-base/dist/otlp-grpc-export-delegate.mjs requires @grpc/grpc-js at run time, ${hint}`,
    ]);
  });

  it('names an external package whose code is bundled anyway', () => {
    const inputs = {
      inputs: {
        'node_modules/@grpc/grpc-js/build/src/index.js': {},
        'node_modules/@grpc/grpc-js/build/src/channel-credentials.js': {},
      },
    };
    expect(bundleProblems(inputs, ROOT)).toEqual([
      'code of @grpc/grpc-js is in a chunk, but @grpc/grpc-js is external',
    ]);
  });
});
