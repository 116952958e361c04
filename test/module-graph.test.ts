/**
 * The import graph of `src/` has no cycle: every relative `import`/`export
 * ... from` (type-only ones included, since a cycle of types is a cycle of
 * knowledge) is an edge, and a depth-first walk finds no back edge. Dynamic
 * `import()` (lazy loading) is left out: it runs after both modules loaded.
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

/** Relative static import targets of one module, as absolute `.ts` paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const targets: string[] = [];
  for (const match of text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'(\.{1,2}\/[^']+)'/gms)) {
    const spec = match[1] ?? '';
    targets.push(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
  }
  for (const match of text.matchAll(/^\s*import\s+'(\.{1,2}\/[^']+)'/gm)) targets.push(resolve(dirname(file), (match[1] ?? '').replace(/\.js$/, '.ts')));
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
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next].map((p) => relative(SRC, p)));
      else if (state.get(next) === undefined) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (state.get(node) === undefined) visit(node);
  return found;
}

describe('the module graph of src/', () => {
  const graph = new Map(sources(SRC).map((file) => [file, importsOf(file)]));

  it('resolves every relative import to a module of src/', () => {
    const missing = [...graph.entries()].flatMap(([file, targets]) => targets.filter((t) => !graph.has(t)).map((t) => `${relative(SRC, file)} -> ${relative(SRC, t)}`));
    expect(missing).toEqual([]);
    expect([...graph.values()].flat().length).toBeGreaterThan(100);
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle when there is one (the walker itself)', () => {
    const a = join(SRC, 'a.ts');
    const b = join(SRC, 'b.ts');
    expect(cycles(new Map([[a, [b]], [b, [a]]]))).toEqual([['a.ts', 'b.ts', 'a.ts']]);
  });
});
