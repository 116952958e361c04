/**
 * The proxy's V8 code cache (decision 0040), with real proxies running a real
 * scripted SDK runtime: the first run writes the cache, the next one accepts
 * it, and nothing about the cache (damaged, refused, unwritable, shared by
 * proxies running at once, switched off) changes a byte the client sees or
 * a span the run exports. What happened to the cache is read from the
 * diagnostics log (`SUBAGENT_OTEL_LOG_FILE`), the only place it is said.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, watch, writeFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ATTR_SUBAGENT_OUTPUT, ATTR_SUBAGENT_OUTPUT_SOURCE } from '../../src/telemetry/semconv.js';
import { attributes, finished, isIdleLine, readSpans, rpc, spawnCli, waitForLine } from '../helpers/cli.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { FIXTURE_SDK_RUNTIME } from '../helpers/paths.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'code-cache-e2e-'));

/** Stdout with what every session generates anew (times, ids) blanked. */
const shape = (stdout: string): string =>
  stdout.replace(/"time":\d+/g, '"time":0').replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'ID');

interface Session {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The `invoke_agent` spans' output attributes. */
  readonly outputs: ReadonlyArray<Record<string, unknown>>;
  /** The proxy's `code cache` log lines, without their time stamps. */
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
        .filter((l) => l.includes('code cache'))
        .map((l) => l.replace(/^\S+ /, ''))
    : [];
  return { code: r.code, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8'), outputs, cacheLog };
}

/** What every session of the scripted runtime's `FAKE_EMPTY_MESSAGE` turn exports, whatever became of the cache. */
const EXPECTED_OUTPUTS = [{ output: '[{"type":"text","text":"Partial answer before the limit"}]', source: 'stream' }];

/** Resolves once `file` contains `text` (watching its directory); rejects if `child` closes first. */
function fileContains(file: string, text: string, child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const has = (): boolean => existsSync(file) && readFileSync(file, 'utf8').includes(text);
    const watcher = watch(dirname(file), () => {
      if (!has()) return;
      watcher.close();
      resolve();
    });
    child.once('close', () => {
      watcher.close();
      reject(new Error(`the proxy closed before ${basename(file)} said '${text}'`));
    });
    if (has()) {
      watcher.close();
      resolve();
    }
  });
}

function cacheFiles(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith('.v8cache'));
}

describe('the proxy keeps V8 code cache of its observation (real processes)', () => {
  it('writes the cache on the first run and accepts it on the next, with the same bytes and spans', async () => {
    const cacheDir = join(tmp(), 'cache');
    const first = await session(cacheDir);
    expect(first.code).toBe(0);
    expect(first.outputs).toEqual(EXPECTED_OUTPUTS);
    expect(first.cacheLog).toHaveLength(2);
    expect(first.cacheLog[0]).toMatch(/^info subagent-otel: code cache: absent .*\.v8cache \(no cache file yet\)$/);
    expect(first.cacheLog[1]).toMatch(/^info subagent-otel: code cache written \(\d+ bytes\) to /);
    const files = cacheFiles(cacheDir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`^observation-\\w+\\.cjs-${process.version.replace(/\./g, '\\.')}-${process.arch}-[0-9a-f]{12}\\.v8cache$`));
    // Private to the user: a code cache is code.
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(cacheDir, files[0] as string)).mode & 0o777).toBe(0o600);

    const second = await session(cacheDir);
    expect(second.code).toBe(0);
    expect(second.cacheLog).toEqual([`info subagent-otel: code cache: accepted ${join(cacheDir, files[0] as string)}`]);
    expect(shape(second.stdout)).toBe(shape(first.stdout));
    expect(second.stderr).toBe(first.stderr);
    expect(second.outputs).toEqual(EXPECTED_OUTPUTS);
    expect(readdirSync(cacheDir)).toEqual(files);
  });

  it('exports over OTLP/HTTP from the cache as without it (the exporter loads node:http when it first sends)', async () => {
    const cacheDir = join(tmp(), 'cache');
    await session(cacheDir);
    const receiver = await startOtlpReceiver({ kind: 'healthy' });
    try {
      const cached = await session(cacheDir, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
      expect(cached.code).toBe(0);
      expect(cached.cacheLog[0]).toMatch(/code cache: accepted /);
      expect(cached.stderr).toBe('');
      expect(receiver.acceptedSpans().filter((span) => span.name.startsWith('invoke_agent'))).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('ignores a damaged or truncated cache file and writes a good one in its place', async () => {
    const cacheDir = join(tmp(), 'cache');
    const reference = await session(cacheDir);
    const [name] = cacheFiles(cacheDir);
    const file = join(cacheDir, name as string);
    const good = readFileSync(file);

    const damaged = Buffer.from(good);
    damaged[damaged.length - 100] = (damaged[damaged.length - 100] as number) ^ 0xff;
    writeFileSync(file, damaged);
    const afterDamage = await session(cacheDir);
    expect(afterDamage.code).toBe(0);
    expect(afterDamage.cacheLog[0]).toMatch(/code cache: absent .* \(cache file is damaged \(digest mismatch\)\)$/);
    expect(afterDamage.cacheLog[1]).toMatch(/code cache written/);
    expect(shape(afterDamage.stdout)).toBe(shape(reference.stdout));
    expect(afterDamage.outputs).toEqual(EXPECTED_OUTPUTS);

    writeFileSync(file, good.subarray(0, 20));
    const afterTruncation = await session(cacheDir);
    expect(afterTruncation.code).toBe(0);
    expect(afterTruncation.cacheLog[0]).toMatch(/code cache: absent .* \(cache file is not a code cache of this format\)$/);
    expect(shape(afterTruncation.stdout)).toBe(shape(reference.stdout));
    expect(afterTruncation.outputs).toEqual(EXPECTED_OUTPUTS);

    const healed = await session(cacheDir);
    expect(healed.cacheLog).toEqual([`info subagent-otel: code cache: accepted ${file}`]);
  });

  it('replaces a cache that V8 refuses (a well-formed file of another build)', async () => {
    const cacheDir = join(tmp(), 'cache');
    await session(cacheDir);
    const [name] = cacheFiles(cacheDir);
    const file = join(cacheDir, name as string);
    // A correctly framed file (magic, digest of the payload) whose payload is not V8's: V8 itself must refuse it.
    const { createHash } = await import('node:crypto');
    const payload = Buffer.alloc(4096, 7);
    writeFileSync(file, Buffer.concat([Buffer.from('SOTCC001', 'latin1'), createHash('sha256').update(payload).digest(), payload]));
    const refused = await session(cacheDir);
    expect(refused.code).toBe(0);
    expect(refused.cacheLog[0]).toMatch(/code cache: rejected /);
    expect(refused.cacheLog[1]).toMatch(/code cache written/);
    expect(refused.outputs).toEqual(EXPECTED_OUTPUTS);
    expect((await session(cacheDir)).cacheLog).toEqual([`info subagent-otel: code cache: accepted ${file}`]);
  });

  it('runs unaffected when the cache directory cannot be made or the cache cannot be read or written, and says so only in its log', async () => {
    const blocker = join(tmp(), 'a-file');
    writeFileSync(blocker, 'x');
    const unusable = await session(join(blocker, 'cache'));
    expect(unusable.code).toBe(0);
    expect(unusable.stderr).toBe('');
    expect(unusable.outputs).toEqual(EXPECTED_OUTPUTS);
    expect(unusable.cacheLog).toEqual([`info subagent-otel: code cache: not used: cache directory ${join(blocker, 'cache')} unusable (ENOTDIR)`]);

    // A directory where the cache file belongs: it can be neither read nor replaced.
    const elsewhere = join(tmp(), 'cache');
    const reference = await session(elsewhere);
    const [name] = cacheFiles(elsewhere);
    const cacheDir = join(tmp(), 'cache');
    mkdirSync(join(cacheDir, name as string), { recursive: true });
    const blocked = await session(cacheDir);
    expect(blocked.code).toBe(0);
    expect(blocked.stderr).toBe('');
    expect(shape(blocked.stdout)).toBe(shape(reference.stdout));
    expect(blocked.outputs).toEqual(EXPECTED_OUTPUTS);
    expect(blocked.cacheLog[0]).toMatch(/code cache: absent .* \(cache file unreadable \(EISDIR\)\)$/);
    expect(blocked.cacheLog[1]).toMatch(new RegExp(`code cache not written to ${join(cacheDir, name as string)}: `));
    // Its temporary file went with the failure.
    expect(readdirSync(cacheDir)).toEqual([name]);
  });

  it('uses no directory that others can write to, and none when switched off', async () => {
    const open = join(tmp(), 'shared');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const shared = await session(open);
    expect(shared.code).toBe(0);
    expect(shared.outputs).toEqual(EXPECTED_OUTPUTS);
    expect(shared.cacheLog).toEqual([`info subagent-otel: code cache: not used: cache directory ${open} is writable by others`]);
    expect(readdirSync(open)).toEqual([]);

    const off = await session('off');
    expect(off.code).toBe(0);
    expect(off.outputs).toEqual(EXPECTED_OUTPUTS);
    expect(off.cacheLog).toEqual(['info subagent-otel: code cache: off (SUBAGENT_OTEL_CODE_CACHE)']);
  });

  it('writes the cache during a long session, without waiting for its end, and does not write it again at exit', async () => {
    const dir = tmp();
    const cacheDir = join(dir, 'cache');
    const log = join(dir, 'proxy.log');
    // An agent that echoes its stdin and lives until it ends (the pipe then ends stdout, and the process with it).
    const agent = 'process.stdin.pipe(process.stdout);';
    const child = spawnCli(['proxy', '--out', join(dir, 'otel'), '--', process.execPath, '-e', agent], {
      SUBAGENT_OTEL_CODE_CACHE: cacheDir,
      SUBAGENT_OTEL_LOG_FILE: log,
    });
    const done = finished(child);
    child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await fileContains(log, 'code cache written', child);
    expect(child.exitCode).toBeNull();
    child.stdin.end('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    const r = await done;
    expect(r.code).toBe(0);
    expect(r.stdout.toString('utf8')).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    expect(readFileSync(log, 'utf8').split('code cache written')).toHaveLength(2);
    expect(cacheFiles(cacheDir)).toHaveLength(1);
    expect((await session(cacheDir)).cacheLog).toEqual([`info subagent-otel: code cache: accepted ${join(cacheDir, cacheFiles(cacheDir)[0] as string)}`]);
  });

  it('leaves one whole cache file when proxies start together on an empty directory', async () => {
    const cacheDir = join(tmp(), 'cache');
    const sessions = await Promise.all([session(cacheDir), session(cacheDir), session(cacheDir), session(cacheDir)]);
    for (const s of sessions) {
      expect(s.code).toBe(0);
      expect(s.outputs).toEqual(EXPECTED_OUTPUTS);
    }
    // Each wrote to a file of its own and renamed it: no temporary file is left, and the survivor is whole.
    expect(readdirSync(cacheDir)).toEqual(cacheFiles(cacheDir));
    expect(cacheFiles(cacheDir)).toHaveLength(1);
    expect((await session(cacheDir)).cacheLog).toEqual([`info subagent-otel: code cache: accepted ${join(cacheDir, cacheFiles(cacheDir)[0] as string)}`]);
  });
});
