/**
 * Node's compile cache under the bundled CLI (decision 0061), with real
 * proxies running a real scripted SDK runtime: the first run writes the
 * cache in `SUBAGENT_OTEL_CODE_CACHE` (a private directory), the next one
 * starts from it (Node's own debug output says each module's cache was
 * accepted), and nothing about the cache (off, an unusable or shared
 * directory) changes a byte the client sees or a span the run exports. What
 * happened is said only in the diagnostics log (`SUBAGENT_OTEL_LOG_FILE`).
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ATTR_SUBAGENT_OUTPUT, ATTR_SUBAGENT_OUTPUT_SOURCE } from '../../src/telemetry/semconv.js';
import { attributes, finished, isIdleLine, readSpans, rpc, spawnCli, waitForLine } from '../helpers/cli.js';
import { FIXTURE_SDK_RUNTIME } from '../helpers/paths.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'compile-cache-e2e-'));

/** Stdout with what every session generates anew (times, ids) blanked. */
const shape = (stdout: string): string =>
  stdout
    .replace(/"time":\d+/g, '"time":0')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'ID');

interface Session {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly outputs: ReadonlyArray<Record<string, unknown>>;
  /** The proxy's `compile cache` log lines, without their time stamps. */
  readonly cacheLog: readonly string[];
}

/** One prompt turn of the scripted runtime through the proxy, with `cacheDir` as `SUBAGENT_OTEL_CODE_CACHE`. */
async function session(cacheDir: string, env: NodeJS.ProcessEnv = {}): Promise<Session> {
  const dir = tmp();
  const out = join(dir, 'otel');
  const log = join(dir, 'proxy.log');
  const child = spawnCli(['proxy', '--out', out, '--', process.execPath, FIXTURE_SDK_RUNTIME], {
    FAKE_EMPTY_MESSAGE: '1',
    SUBAGENT_OTEL_CODE_CACHE: cacheDir,
    SUBAGENT_OTEL_LOG_FILE: log,
    ...env,
  });
  const done = finished(child);
  child.stdin.write(rpc(1, 'initialize', { cwd: '/', provider: 'deepseek', model: 'deepseek-chat' }));
  const idle = waitForLine(child, isIdleLine('s1'));
  child.stdin.write(rpc(2, 'session/prompt', { sessionId: 's1', contentBlocks: [{ type: 'text', text: 'go' }] }));
  await idle;
  child.stdin.end(rpc(3, 'shutdown'));
  const r = await done;
  const outputs = readSpans(out)
    .filter((s) => s.name.startsWith('invoke_agent'))
    .map((s) => {
      const a = attributes(s);
      return { output: a[ATTR_SUBAGENT_OUTPUT], source: a[ATTR_SUBAGENT_OUTPUT_SOURCE] };
    });
  const cacheLog = existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l.includes('compile cache'))
        .map((l) => l.replace(/^\S+ /, ''))
    : [];
  return { code: r.code, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8'), outputs, cacheLog };
}

/** What every session of the scripted runtime's `FAKE_EMPTY_MESSAGE` turn exports, whatever became of the cache. */
const EXPECTED_OUTPUTS = [{ output: '[{"type":"text","text":"Partial answer before the limit"}]', source: 'stream' }];

describe("the CLI keeps Node's compile cache (real processes)", () => {
  it('writes the cache on the first run into a private directory, and the next run starts from it, with the same bytes and spans', async () => {
    const cacheDir = join(tmp(), 'cache');
    const first = await session(cacheDir);
    expect(first.code).toBe(0);
    expect(first.outputs).toEqual(EXPECTED_OUTPUTS);
    expect(first.cacheLog).toEqual([`info subagent-otel: compile cache: ${cacheDir}`]);
    // Private to the user: a compile cache is code.
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    // One directory per Node version and build, a file per module compiled.
    const [versionDir, ...others] = readdirSync(cacheDir);
    expect(others).toEqual([]);
    expect(versionDir).toMatch(new RegExp(`^v${process.versions.node.replace(/\./g, '\\.')}-${process.arch}-`));
    expect(readdirSync(join(cacheDir, versionDir as string)).length).toBeGreaterThan(3);

    // Node says, for each module it loads, whether the cache was accepted (on stderr, the proxy's and the agent's;
    // Node 22: `cache for file://...`, Node 24 and later: `V8 code cache for ESM file://...`).
    const second = await session(cacheDir, { NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/cache for (?:ESM )?file:\/\/\S+\/dist\/cli\/main\.js was accepted/);
    expect(second.stderr).toMatch(
      /cache for (?:ESM )?file:\/\/\S+\/dist\/cli\/chunks\/proxy-observation-[\w-]+\.js was accepted/,
    );
    expect(second.stderr).not.toMatch(/dist\/cli\/\S+ was rejected|mismatch/);
    expect(shape(second.stdout)).toBe(shape(first.stdout));
    expect(second.outputs).toEqual(EXPECTED_OUTPUTS);
  });

  it('is off for SUBAGENT_OTEL_CODE_CACHE=off: no directory is made, and the run is the same', async () => {
    const home = tmp();
    const run = await session('off', { XDG_CACHE_HOME: home });
    expect(run.code).toBe(0);
    expect(run.outputs).toEqual(EXPECTED_OUTPUTS);
    expect(run.cacheLog).toEqual(['info subagent-otel: compile cache: off (SUBAGENT_OTEL_CODE_CACHE)']);
    expect(readdirSync(home)).toEqual([]);
  });

  it('runs unaffected, saying so only in its log, when the directory cannot be made or others can write to it', async () => {
    const blocker = join(tmp(), 'a-file');
    writeFileSync(blocker, 'x');
    const unusable = await session(join(blocker, 'cache'));
    expect(unusable.code).toBe(0);
    expect(unusable.stderr).toBe('');
    expect(unusable.outputs).toEqual(EXPECTED_OUTPUTS);
    expect(unusable.cacheLog).toEqual([
      `info subagent-otel: compile cache: not used: cache directory ${join(blocker, 'cache')} unusable (ENOTDIR)`,
    ]);

    const shared = join(tmp(), 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const refused = await session(shared);
    expect(refused.code).toBe(0);
    expect(refused.stderr).toBe('');
    expect(refused.outputs).toEqual(EXPECTED_OUTPUTS);
    expect(refused.cacheLog).toEqual([
      `info subagent-otel: compile cache: not used: cache directory ${shared} is writable by others`,
    ]);
    expect(readdirSync(shared)).toEqual([]);
  });
});
