/**
 * A new user's first hour, as the README tells it: the packed package is
 * installed into an empty npm prefix (and the clone as a folder, as `npm
 * install -g .` does), and every shell block of the README's Quickstart and
 * replay sections runs as written with that prefix on the PATH, in an empty
 * directory. What each `console` block shows after its `$ command` line must
 * be what the command prints on stdout: line for line, with `...` standing
 * for any number of lines and the working directory shown as `/home/me`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers/paths.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

/** The README's home directory in examples; the test's working directory is shown as this. */
const README_HOME = '/home/me';

interface Block {
  readonly lang: string;
  readonly lines: readonly string[];
}

/** The text of a section: from its heading line to the next heading of the same or a higher level. */
export function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l === heading);
  if (start === -1) throw new Error(`README has no heading '${heading}'`);
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && (/^#+/.exec(l)?.[0].length ?? 9) <= level);
  return lines.slice(start, end === -1 ? undefined : end).join('\n');
}

/** Fenced code blocks of a text, with their language. */
export function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  let current: { lang: string; lines: string[] } | undefined;
  for (const line of markdown.split('\n')) {
    const fence = /^```(\w*)\s*$/.exec(line);
    if (fence !== null) {
      if (current === undefined) current = { lang: fence[1] ?? '', lines: [] };
      else {
        out.push(current);
        current = undefined;
      }
    } else current?.lines.push(line);
  }
  return out;
}

/**
 * Whether `actual` lines show what `expected` lines show: equal line for line
 * (trailing blanks ignored), where an expected `...` line matches any number
 * of lines. @returns `undefined` on a match, else what did not match.
 */
export function mismatch(expected: readonly string[], actual: readonly string[]): string | undefined {
  const trim = (l: string): string => l.trimEnd();
  const want = expected.map(trim);
  const got = actual.map(trim);
  // Classic wildcard matching over lines, where `...` is the only wildcard.
  const memo = new Map<string, boolean>();
  const match = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === want.length) result = j === got.length;
    else if (want[i] === '...') result = match(i + 1, j) || (j < got.length && match(i, j + 1));
    else result = j < got.length && want[i] === got[j] && match(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  if (match(0, 0)) return undefined;
  const firstMissing = want.find((l) => l !== '...' && !got.includes(l));
  return firstMissing !== undefined
    ? `this README line was not printed: ${JSON.stringify(firstMissing)}`
    : 'the lines were printed, but not in this order';
}

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', command], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    );
  });
}

/** The environment of a new user: no telemetry configuration, the test prefix first on the PATH, C collation for `ls`. */
function userEnv(bin: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (
      !key.startsWith('OTEL_') &&
      !key.startsWith('SUBAGENT_OTEL_') &&
      !key.startsWith('npm_') &&
      !key.startsWith('VITEST')
    )
      env[key] = value;
  }
  return { ...env, PATH: `${bin}:${process.env.PATH ?? ''}`, LC_ALL: 'C' };
}

describe('the README checker itself', () => {
  it('matches lines with ... as a wildcard and names what is missing', () => {
    expect(mismatch(['a', '...', 'd'], ['a', 'b', 'c', 'd'])).toBeUndefined();
    expect(mismatch(['a', '...'], ['a'])).toBeUndefined();
    expect(mismatch(['a', 'c'], ['a', 'b', 'c'])).toBe('the lines were printed, but not in this order');
    expect(mismatch(['a', 'x'], ['a', 'b'])).toBe('this README line was not printed: "x"');
    expect(blocks('text\n```sh\nls\n```\n```console\n$ a\nb\n```\n')).toEqual([
      { lang: 'sh', lines: ['ls'] },
      { lang: 'console', lines: ['$ a', 'b'] },
    ]);
  });
});

describe('installing and following the README', () => {
  const root = mkdtempSync(join(tmpdir(), 'readme-'));
  const prefix = join(root, 'prefix');
  const bin = join(prefix, 'bin');
  let tarball = '';

  beforeAll(() => {
    const packed = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', root], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const [info] = JSON.parse(packed) as Array<{ filename: string }>;
    tarball = join(root, info?.filename ?? '');
    execFileSync(
      'npm',
      ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', tarball],
      { cwd: root, encoding: 'utf8', stdio: 'pipe' },
    );
  }, 240_000);

  it('puts subagent-otel on the PATH from the packed tarball, as a copy', async () => {
    expect(tarball.endsWith(`${pkg.name}-${pkg.version}.tgz`)).toBe(true);
    const r = await run('subagent-otel --version', root, userEnv(bin));
    expect(r).toEqual({ code: 0, stdout: `subagent-otel ${pkg.version}\n`, stderr: '' });
    expect(realpathSync(join(bin, 'subagent-otel')).startsWith(`${realpathSync(prefix)}/`)).toBe(true);
  });

  it('puts subagent-otel on the PATH from the clone (npm install -g .), linked to the clone', async () => {
    const folderPrefix = join(root, 'folder-prefix');
    execFileSync(
      'npm',
      ['install', '--global', '--prefix', folderPrefix, '--no-audit', '--no-fund', '--ignore-scripts', '.'],
      { cwd: ROOT, stdio: 'pipe' },
    );
    const r = await run('subagent-otel --version', root, userEnv(join(folderPrefix, 'bin')));
    expect(r).toEqual({ code: 0, stdout: `subagent-otel ${pkg.version}\n`, stderr: '' });
    expect(realpathSync(join(folderPrefix, 'bin', 'subagent-otel')).startsWith(`${realpathSync(ROOT)}/`)).toBe(true);
  });

  it.each([
    ['## Subagents from the files your coding agents already write', ['console']],
    ['## Quickstart', ['console', 'console']],
    ['### After the fact: replay', ['sh', 'console', 'console', 'sh']],
  ])(
    'runs every shell block of %s as written and prints what the README shows',
    async (heading, langs) => {
      const shown = blocks(section(readme, heading)).filter((b) => b.lang === 'sh' || b.lang === 'console');
      expect(shown.map((b) => b.lang)).toEqual(langs);
      const cwd = realpathSync(mkdtempSync(join(root, 'user-')));
      let env = userEnv(bin);
      if (heading.startsWith('## Subagents')) {
        // Run from a copy of the clone's generated sessions, at the path the README names.
        cpSync(
          join(ROOT, 'test', 'transcripts', 'claude-code', 'generated'),
          join(cwd, 'test', 'transcripts', 'claude-code', 'generated'),
          { recursive: true },
        );
        env = { ...env, HOME: cwd };
      } else if (heading !== '## Quickstart') {
        try {
          execFileSync('zstd', ['--version'], { stdio: 'pipe' });
        } catch {
          // spawn ENOENT: the tool is missing; say how to get it instead of failing on a file list.
          throw new Error(
            'the README replay section needs the zstd tool (demo --sessions compresses with it): apt-get install -y zstd',
          );
        }
        // The replay section follows the Quickstart: a user has run the demo once already.
        expect((await run('subagent-otel demo > /dev/null', cwd, env)).code).toBe(0);
      }
      for (const block of shown) {
        if (block.lang === 'sh') {
          const r = await run(block.lines.join('\n'), cwd, env);
          expect(r.code, `${block.lines.join('\n')}\n${r.stderr}`).toBe(0);
          continue;
        }
        const [prompt, ...expected] = block.lines;
        expect(prompt?.startsWith('$ '), `a console block starts with '$ <command>': ${String(prompt)}`).toBe(true);
        const command = (prompt ?? '').slice(2);
        const r = await run(command, cwd, env);
        expect(r.code, `${command}\n${r.stderr}`).toBe(0);
        const printed = r.stdout.replaceAll(cwd, README_HOME).replace(/\n$/, '').split('\n');
        expect(mismatch(expected, printed), `${command} printed:\n${printed.join('\n')}`).toBeUndefined();
      }
    },
    240_000,
  );
});
