/**
 * The Node.js floor (decision 0060): the package says `engines.node >=
 * 22.15.0`, and the installed command refuses an older Node with one line on
 * stderr and exit code 1, before it loads anything else (so an old Node,
 * which cannot run the rest, gets that far). Checked with a real older Node
 * when the machine has one outside `node_modules` (this project's machines
 * have Node 20 as their own), and always with the current Node made to say
 * it is 22.14.0 (a preload that changes `process.versions.node`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, ROOT } from '../helpers/paths.js';

const REFUSAL =
  /^subagent-otel: needs Node\.js 22\.15 or later, but this is Node\.js (\S+) \((\S+)\); install a current Node\.js LTS and run it again\n$/;

/** The first `node` on PATH outside any `node_modules/.bin` (npm puts the pinned one first) that is older than 22.15, if any. */
function olderNodeOnPath(): { path: string; version: string } | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '' || dir.includes('node_modules')) continue;
    const path = join(dir, 'node');
    if (!existsSync(path)) continue;
    const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
    const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
    if (major < 22 || (major === 22 && minor < 15)) return { path, version };
  }
  return undefined;
}

describe('the Node.js floor', () => {
  it('is 22.15.0 in package.json, with the types of Node 22 and a pinned Node 22 for the scripts', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      engines: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.engines).toEqual({ node: '>=22.15.0' });
    expect(pkg.devDependencies['@types/node']).toMatch(/^22\./);
    expect(pkg.devDependencies['node']).toMatch(/^22\.\d+\.\d+$/);
  });

  it('runs the test suite under a Node at or above the floor', () => {
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    expect(major > 22 || (major === 22 && minor >= 15), `this suite runs on ${process.version}`).toBe(true);
  });

  it('is refused in one line, exit code 1, by a Node that says it is 22.14.0', () => {
    const preload =
      'data:text/javascript,' +
      encodeURIComponent("Object.defineProperty(process.versions, 'node', { value: '22.14.0' });");
    const result = spawnSync(process.execPath, ['--import', preload, CLI, '--version'], { encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    const match = REFUSAL.exec(result.stderr);
    expect(match, result.stderr).not.toBeNull();
    expect(match?.[1]).toBe('22.14.0');
    expect(match?.[2]).toBe(process.execPath);
  });

  it("is refused in one line, exit code 1, by a real older Node (this machine's own when it has one), and works under this one", () => {
    const older = olderNodeOnPath();
    const node = older?.path ?? process.execPath;
    const args =
      older !== undefined
        ? [CLI, '--version']
        : [
            '--import',
            'data:text/javascript,' +
              encodeURIComponent("Object.defineProperty(process.versions, 'node', { value: '20.19.0' });"),
            CLI,
            '--version',
          ];
    const refused = spawnSync(node, args, { encoding: 'utf8' });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(REFUSAL);
    expect(refused.stderr.split('\n')).toHaveLength(2);
    if (older !== undefined)
      expect(refused.stderr).toContain(`this is Node.js ${older.version.replace(/^v/, '')} (${older.path})`);
    const current = spawnSync(process.execPath, [CLI, '--version'], { encoding: 'utf8' });
    expect(current.status).toBe(0);
    expect(current.stdout).toMatch(/^subagent-otel \d+\.\d+\.\d+\n$/);
  });
});
