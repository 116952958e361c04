/**
 * The import graph of `src/`: no cycle, and every import keeps the layer
 * order `docs/ARCHITECTURE.md` states.
 *
 * Cycles: every relative `import`/`export ... from` (type-only ones
 * included, since a cycle of types is a cycle of knowledge) is an edge, and
 * a depth-first walk finds no back edge. Dynamic `import()` (lazy loading)
 * is left out there: it runs after both modules loaded.
 *
 * Layers: the numbered list of "Layers and data flow" in ARCHITECTURE,
 * lowest first, read from the doc itself (so reordering the doc is checked
 * too). A module may import its own folder or a lower layer; folders on one
 * line are peers and import nothing of each other. Type-only imports and
 * `import()` count here: a type or a lazy load is knowledge of the module
 * all the same, and a layer may not know what sits above it. The imports
 * that break the order today are {@link EXCEPTIONS}, each with its reason.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/paths.js';

const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Relative import targets of one module, as absolute `.ts` paths: static ones, and with `dynamic` the `import()`s too. */
function importsOf(file: string, dynamic = false): string[] {
  const text = readFileSync(file, 'utf8');
  const targets: string[] = [];
  if (dynamic)
    for (const match of text.matchAll(/\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g))
      targets.push(resolve(dirname(file), (match[1] ?? '').replace(/\.js$/, '.ts')));
  for (const match of text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'(\.{1,2}\/[^']+)'/gms)) {
    const spec = match[1] ?? '';
    targets.push(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
  }
  for (const match of text.matchAll(/^\s*import\s+'(\.{1,2}\/[^']+)'/gm))
    targets.push(resolve(dirname(file), (match[1] ?? '').replace(/\.js$/, '.ts')));
  return targets;
}

/** Every cycle found by a depth-first walk, each as the chain of modules relative to `src/`. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open')
        found.push([...stack.slice(stack.indexOf(next)), next].map((p) => relative(SRC, p)));
      else if (state.get(next) === undefined) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (state.get(node) === undefined) visit(node);
  return found;
}

const ARCHITECTURE = join(ROOT, 'docs', 'ARCHITECTURE.md');

/**
 * The imports that break the layer order today, each named with its reason
 * (issue 39). The test fails on any other, and on an exception that no
 * longer happens (remove it then).
 */
const EXCEPTIONS: readonly { readonly from: string; readonly to: string; readonly reason: string }[] = [
  {
    from: 'proxy/proxy-observation.ts',
    to: 'cli/options.ts',
    reason:
      "the proxy's observation takes the type of its command's parsed options (the telemetry flags) from the command line; the flags' type belongs below both (telemetry/)",
  },
  {
    from: 'proxy/proxy-observation.ts',
    to: 'cli/telemetry-options.ts',
    reason:
      "the proxy builds its telemetry from the command line's flags with the same mapping every command uses; that mapping belongs below both (telemetry/)",
  },
  {
    from: 'proxy/run-proxy.ts',
    to: 'cli/compile-cache.ts',
    reason:
      "the proxy writes the compile cache the command's entry turned on before its heap flag changes V8's cache key (decision 0061); the cache switch is the entry's, below which the proxy does not reach",
  },
  {
    from: 'view/sources.ts',
    to: 'cli/telemetry-options.ts',
    reason:
      "view's in-process replay takes exportBackpressure from the command line's telemetry options; it belongs below both (telemetry/)",
  },
  {
    from: 'view/sources.ts',
    to: 'cli/errors.ts',
    reason:
      "view reports a path that does not exist as the command line's UsageError; the error type belongs below both",
  },
  {
    from: 'fixtures/acp-agent.ts',
    to: 'telemetry/config.ts',
    reason:
      "the scripted ACP agent reads OTEL_EXPORTER_OTLP_HEADERS with the project's parseOtlpHeaders (380a2fc), although a fixture shares no code with what it tests (its own header and src/fixtures/README.md say so)",
  },
];

/** What a module belongs to: its folder under `src/` (`wire/`), or for a file directly in `src/` its name (`index.ts`). */
function unitOf(path: string): string {
  const parts = relative(SRC, path).split('/');
  return parts.length === 1 ? (parts[0] ?? '') : `${parts[0] ?? ''}/`;
}

/**
 * The layer list of a Markdown text: the numbered items of its section
 * "Layers and data flow", lowest first, each the backquoted names on the
 * item's own line (one name, or peers). Throws when the section or list is
 * missing or numbered out of order.
 */
function layersOf(markdown: string): string[][] {
  const section = /^## Layers and data flow\n([\s\S]*?)(?=^## )/m.exec(markdown)?.[1];
  if (section === undefined) throw new Error('no section "## Layers and data flow"');
  const items = [...section.matchAll(/^(\d+)\. (.*)$/gm)];
  items.forEach((item, index) => {
    if (Number(item[1]) !== index + 1)
      throw new Error(`layer item ${String(item[1])} where ${String(index + 1)} was due`);
  });
  const layers = items.map((item) => [...(item[2] ?? '').matchAll(/`([^`]+)`/g)].map((name) => name[1] ?? ''));
  if (layers.length === 0 || layers.some((names) => names.length === 0))
    throw new Error('no layer list, or an item that names no folder');
  return layers;
}

/** Every import (as `from -> to`, relative to `src/`) whose target is not in its own unit nor in a lower layer. */
function layerViolations(graph: Map<string, string[]>, layers: string[][]): string[] {
  const level = new Map(layers.flatMap((names, index) => names.map((name) => [name, index] as const)));
  return [...graph.entries()].flatMap(([file, targets]) =>
    targets.flatMap((target) => {
      const from = unitOf(file);
      const to = unitOf(target);
      if (from === to) return [];
      const up = level.get(from);
      const down = level.get(to);
      if (up !== undefined && down !== undefined && down < up) return [];
      return [`${relative(SRC, file)} -> ${relative(SRC, target)}`];
    }),
  );
}

describe('the module graph of src/', () => {
  const graph = new Map(sources(SRC).map((file) => [file, importsOf(file)]));

  it('resolves every relative import to a module of src/', () => {
    const missing = [...graph.entries()].flatMap(([file, targets]) =>
      targets.filter((t) => !graph.has(t)).map((t) => `${relative(SRC, file)} -> ${relative(SRC, t)}`),
    );
    expect(missing).toEqual([]);
    expect([...graph.values()].flat().length).toBeGreaterThan(100);
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle when there is one (the walker itself)', () => {
    const a = join(SRC, 'a.ts');
    const b = join(SRC, 'b.ts');
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts', 'a.ts']]);
  });

  describe('keeps the layer order of docs/ARCHITECTURE.md', () => {
    const layers = layersOf(readFileSync(ARCHITECTURE, 'utf8'));
    const withLazy = new Map(sources(SRC).map((file) => [file, importsOf(file, true)]));
    const excepted = new Set(EXCEPTIONS.map((e) => `${e.from} -> ${e.to}`));

    it('lists every folder and file directly in src/ exactly once, nothing else', () => {
      const entries = readdirSync(SRC)
        .filter((name) => statSync(join(SRC, name)).isDirectory() || name.endsWith('.ts'))
        .map((name) => (name.endsWith('.ts') ? name : `${name}/`));
      expect(layers.flat().toSorted()).toEqual(entries.toSorted());
      expect(layers.length).toBeGreaterThanOrEqual(5);
    });

    it('has every import point into its own folder or down the list, peers apart (but the named exceptions)', () => {
      const found = layerViolations(withLazy, layers).filter((v) => !excepted.has(v));
      expect(found, `imports against the order of docs/ARCHITECTURE.md:\n${found.join('\n')}`).toEqual([]);
    });

    it('names only exceptions that still happen, each with a reason', () => {
      const violations = new Set(layerViolations(withLazy, layers));
      for (const exception of EXCEPTIONS) {
        expect(
          violations.has(`${exception.from} -> ${exception.to}`),
          `${exception.from} -> ${exception.to} no longer breaks the order: remove the exception`,
        ).toBe(true);
        expect(exception.reason.length).toBeGreaterThan(20);
      }
    });

    it('counts type-only imports and import() (the checker itself)', () => {
      expect(withLazy.get(join(SRC, 'cli', 'bin.ts'))).toContain(join(SRC, 'hooks', 'run-hook.ts'));
      expect(withLazy.get(join(SRC, 'pricing', 'run-cost.ts'))).toContain(join(SRC, 'observe', 'run-record.ts'));
    });

    it('finds an import that goes up or to a peer, and reads the order from the doc (the checker itself)', () => {
      const wire = join(SRC, 'wire', 'a.ts');
      const output = join(SRC, 'output', 'b.ts');
      const pricing = join(SRC, 'pricing', 'c.ts');
      const telemetry = join(SRC, 'telemetry', 'd.ts');
      const graph = new Map([
        [wire, [output]],
        [output, [wire]],
        [pricing, [telemetry, join(SRC, 'pricing', 'e.ts')]],
      ]);
      const doc = (list: string): string => `# A\n\n## Layers and data flow\n\n${list}\n\n## Next\n\n1. \`ignored/\`\n`;
      expect(layerViolations(graph, layersOf(doc('1. `wire/`\n2. `output/`\n3. `pricing/` · `telemetry/`')))).toEqual([
        'wire/a.ts -> output/b.ts',
        'pricing/c.ts -> telemetry/d.ts',
      ]);
      expect(
        layerViolations(
          graph,
          layersOf(doc('1. `output/`\n   - what it owns, `not/` a layer\n2. `wire/`\n3. `telemetry/`\n4. `pricing/`')),
        ),
      ).toEqual(['output/b.ts -> wire/a.ts']);
      expect(() => layersOf(doc('1. `wire/`\n3. `output/`'))).toThrow(/item 3/);
      expect(() => layersOf('## Layers\n\n1. `wire/`\n')).toThrow(/no section/);
    });
  });
});
