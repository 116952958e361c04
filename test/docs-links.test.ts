/**
 * The project's documents stand alone: every relative link in every Markdown
 * file, and every `docs/...` path a Markdown file or a source comment names,
 * exists in the repository; same-file `#anchors` name a heading; and no
 * document points outside the repository.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/paths.js';

const SKIP = new Set(['node_modules', 'dist', '.git', 'subagent-otel-out', 'sessions', 'replayed']);

function walk(dir: string, suffixes: readonly string[], out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, suffixes, out);
    else if (suffixes.some((s) => name.endsWith(s))) out.push(path);
  }
  return out;
}

const markdown = walk(ROOT, ['.md']).sort();
const sources = walk(join(ROOT, 'src'), ['.ts']).sort();
const rel = (path: string): string => relative(ROOT, path);

/** Markdown links `[text](target)` outside code blocks, with their line. */
function links(text: string): Array<{ target: string; line: number }> {
  const found: Array<{ target: string; line: number }> = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (line.trimStart().startsWith('```')) fenced = !fenced;
    if (fenced) return;
    for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
      found.push({ target: match[1] ?? '', line: index + 1 });
  });
  return found;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}

function anchors(text: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.trimStart().startsWith('```')) fenced = !fenced;
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (!fenced && heading !== null) out.add(slug(heading[1] ?? ''));
  }
  return out;
}

/** `docs/...` paths named anywhere in a text (links, backticks, prose), without trailing punctuation. */
function docsPaths(text: string): string[] {
  return [...text.matchAll(/(?<![\w./-])(?:\.\.\/)*docs\/[A-Za-z0-9_./-]*[A-Za-z0-9_/]/g)].map((m) =>
    m[0].replace(/^(\.\.\/)+/, ''),
  );
}

describe('Markdown links and paths', () => {
  it('finds the documents', () => {
    expect(markdown.map(rel)).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/ARCHITECTURE.md',
        'docs/PROTOCOLS.md',
        'src/fixtures/README.md',
        'collector-config/README.md',
      ]),
    );
  });

  it.each(markdown.map((file) => [rel(file), file]))('every relative link in %s exists', (_name, file) => {
    const text = readFileSync(file, 'utf8');
    const broken: string[] = [];
    for (const { target, line } of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [path = '', anchor] = target.split('#');
      if (path === '') {
        if (anchor !== undefined && !anchors(text).has(anchor))
          broken.push(`line ${line}: #${anchor} names no heading`);
        continue;
      }
      const resolved = resolve(dirname(file), decodeURIComponent(path));
      if (!`${resolved}${sep}`.startsWith(`${ROOT}${sep}`))
        broken.push(`line ${line}: ${target} points outside the repository`);
      else if (!existsSync(resolved)) broken.push(`line ${line}: ${target} does not exist`);
      else if (
        anchor !== undefined &&
        resolved.endsWith('.md') &&
        !anchors(readFileSync(resolved, 'utf8')).has(anchor)
      ) {
        broken.push(`line ${line}: ${target}: #${anchor} names no heading there`);
      }
    }
    expect(broken).toEqual([]);
  });

  it.each(markdown.map((file) => [rel(file), file]))('every docs/... path %s names exists', (_name, file) => {
    const missing = docsPaths(readFileSync(file, 'utf8')).filter((p) => !existsSync(join(ROOT, p)));
    expect(missing).toEqual([]);
  });

  it('every docs/... path a source comment names exists', () => {
    const missing = sources.flatMap((file) =>
      docsPaths(readFileSync(file, 'utf8'))
        .filter((p) => !existsSync(join(ROOT, p)))
        .map((p) => `${rel(file)}: ${p}`),
    );
    expect(missing).toEqual([]);
  });

  it('no document or source comment refers to design notes outside the repository', () => {
    const outside = [...markdown, ...sources].flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      // A Markdown document names no machine path; sources may hold example URIs, so only the notes' names count there.
      const pattern = file.endsWith('.md')
        ? /\.\.\/shared\/|(?<![\w:/])\/work\/|\b(?:WIRE|DESIGN)\.md\b/g
        : /\.\.\/shared\/|\b(?:WIRE|DESIGN)\.md\b/g;
      const hits = [...text.matchAll(pattern)].map((m) => m[0]);
      return hits.map((hit) => `${rel(file)}: ${hit}`);
    });
    expect(outside).toEqual([]);
  });
});

describe('the checker itself', () => {
  it('finds a broken link, a bad anchor and a missing docs path', () => {
    expect(links('see [a](docs/NOPE.md) and [b](#x)\n```\n[c](ignored.md)\n```\n')).toEqual([
      { target: 'docs/NOPE.md', line: 1 },
      { target: '#x', line: 1 },
    ]);
    expect(docsPaths('read `docs/decisions/0001-span-status-mapping.md`, then docs/RELIABILITY.md.')).toEqual([
      'docs/decisions/0001-span-status-mapping.md',
      'docs/RELIABILITY.md',
    ]);
    expect([...anchors('## Run the stack\n### `check`: where it goes\n')]).toEqual([
      'run-the-stack',
      'check-where-it-goes',
    ]);
  });
});
