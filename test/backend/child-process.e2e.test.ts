/**
 * End-to-end tests of `spawnChild` with real `node -e` children: the
 * scrubbed environment, spawn failures, and teardown reaching quiescence in
 * bounded steps. Waits only on events (a stdout line, the exit promise, the
 * stdout pipe closing), never on sleeps.
 */
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { scrubbedEnv, spawnChild, type ChildHandle } from '../../src/backend/child-process.js';

const spawned: ChildHandle[] = [];
afterEach(async () => {
  // A failed assertion must not leave a child behind.
  await Promise.all(spawned.splice(0).map((child) => child.dispose({ eofMs: 50, termMs: 50, killMs: 1000 })));
});

function node(script: string, env: Record<string, string | undefined> = {}): ChildHandle {
  const child = spawnChild({ command: process.execPath, args: ['-e', script], env });
  spawned.push(child);
  return child;
}

/** Resolves with the first stdout line. */
function firstLine(stdout: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('utf8');
      const newline = text.indexOf('\n');
      if (newline === -1) return;
      stdout.off('data', onData);
      resolve(text.slice(0, newline));
    };
    stdout.on('data', onData);
    stdout.once('end', () => reject(new Error(`stdout ended before a line: ${JSON.stringify(text)}`)));
  });
}

/** Resolves with the stdout lines seen so far once `done` accepts them. */
function linesUntil(stdout: Readable, done: (lines: string[]) => boolean): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('utf8');
      const lines = text.split('\n').slice(0, -1);
      if (!done(lines)) return;
      stdout.off('data', onData);
      resolve(lines);
    };
    stdout.on('data', onData);
    stdout.once('end', () => reject(new Error(`stdout ended early: ${JSON.stringify(text)}`)));
  });
}

/** Resolves with everything the child writes to stdout, once the pipe closes. */
function allOutput(stdout: Readable): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    stdout.once('close', () => resolve(text));
  });
}

/** Linux `PF_EXITING`: the task has started exiting (its files are closed; only the kernel's exit path remains). */
const PF_EXITING = 0x4;

/**
 * Whether `pid` is still a live member of process group `group`: false when
 * no such process exists (ESRCH), when it is a zombie or dead (`Z`, `X`: exited,
 * waiting for its parent or pid 1 to collect it), when it is already exiting,
 * or when the pid now belongs to another group (reused).
 */
function isLiveInGroup(pid: number, group: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  // Fields after the command name: state ppid pgrp session tty_nr tpgid flags ...
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  const [state, , pgrp, , , , flags] = fields;
  if (state === 'Z' || state === 'X') return false;
  if ((Number(flags) & PF_EXITING) !== 0) return false;
  return Number(pgrp) === group;
}

const STUBBORN = `
process.on('SIGTERM', () => process.stdout.write('ignoring SIGTERM\\n'));
process.stdin.on('end', () => undefined);
process.stdin.resume();
setInterval(() => undefined, 1000);
console.log('ready');
`;

describe('spawnChild teardown', () => {
  it('reaps a child that ignores stdin EOF and SIGTERM with SIGKILL within the bounds, leaving no process behind', async () => {
    const child = node(STUBBORN);
    expect(await firstLine(child.stdout)).toBe('ready');
    const pid = child.pid as number;
    const started = Date.now();
    // killMs far above a reap's time on a loaded machine: an exit (not the "did not exit" error) says SIGKILL reaped it.
    const exit = await child.dispose({ eofMs: 150, termMs: 150, killMs: 20_000 });
    const elapsed = Date.now() - started;
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    // Both earlier steps waited their full bound (a lower bound: load only adds to it).
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });

  it('signals the whole process group, so a stubborn grandchild goes down too', async () => {
    const child = node(`
      const grandchild = require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(STUBBORN)}], { stdio: ['ignore', 'inherit', 'ignore'] });
      process.on('SIGTERM', () => undefined);
      process.stdin.resume();
      console.log(String(grandchild.pid));
    `);
    const output = allOutput(child.stdout);
    // Both write to the same pipe: the child its grandchild's pid, the grandchild `ready` once its SIGTERM handler is set.
    const lines = await linesUntil(
      child.stdout,
      (seen) => seen.includes('ready') && seen.some((line) => /^\d+$/.test(line)),
    );
    const grandchildPid = Number(lines.find((line) => /^\d+$/.test(line)));
    expect(isLiveInGroup(grandchildPid, child.pid as number)).toBe(true);
    const exit = await child.dispose({ eofMs: 100, termMs: 100, killMs: 20_000 });
    expect(exit.signal).toBe('SIGKILL');
    // The grandchild shares the child's stdout: the pipe closes only when both are gone.
    await output;
    expect(isLiveInGroup(grandchildPid, child.pid as number)).toBe(false);
    expect(() => process.kill(child.pid as number, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });

  it('stops at the stdin-EOF step when the child exits on EOF', async () => {
    const child = node(
      `process.stdin.resume(); process.stdin.on('end', () => { process.exitCode = 4; }); console.log('ready');`,
    );
    expect(await firstLine(child.stdout)).toBe('ready');
    // Exit code 4 and no signal: it exited on EOF, so SIGTERM was never sent (the EOF bound is far above its exit time).
    expect(await child.dispose({ eofMs: 50_000, termMs: 5000 })).toEqual({ code: 4, signal: null });
  });

  it('runs the graceful hook first and stops there when the child obeys it', async () => {
    const child = node(`
      process.stdin.on('data', (d) => { if (String(d).includes('shutdown')) { process.exitCode = 7; process.stdin.destroy(); } });
      process.stdin.on('end', () => { process.exitCode = 1; });
      console.log('ready');
    `);
    expect(await firstLine(child.stdout)).toBe('ready');
    const exit = await child.dispose({
      graceful: async () => {
        child.stdin.write('shutdown\n');
      },
      gracefulMs: 50_000,
    });
    expect(exit).toEqual({ code: 7, signal: null });
  });

  it('moves on at once when the graceful hook rejects', async () => {
    const child = node(
      `process.stdin.resume(); process.stdin.on('end', () => { process.exitCode = 3; }); console.log('ready');`,
    );
    expect(await firstLine(child.stdout)).toBe('ready');
    // The hook's bound is longer than the test's own timeout: had dispose waited for it, the test would time out.
    const exit = await child.dispose({
      graceful: () => Promise.reject(new Error('connection closed')),
      gracefulMs: 3_600_000,
      eofMs: 50_000,
    });
    expect(exit).toEqual({ code: 3, signal: null });
  });

  it("is idempotent: every dispose call returns the first call's promise", async () => {
    const child = node(STUBBORN);
    expect(await firstLine(child.stdout)).toBe('ready');
    const first = child.dispose({ eofMs: 50, termMs: 50, killMs: 20_000 });
    const second = child.dispose({ eofMs: 60_000 });
    expect(second).toBe(first);
    expect(await second).toEqual({ code: null, signal: 'SIGKILL' });
    expect(child.exitInfo).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('reports the exit of a child that ended by itself', async () => {
    const child = node(`process.exitCode = 9`);
    expect(await child.exited).toEqual({ code: 9, signal: null });
    expect(await child.dispose()).toEqual({ code: 9, signal: null });
  });
});

describe('spawnChild failures never throw or reject', () => {
  it('resolves the exit of a program that does not exist with the spawn error', async () => {
    const child = spawnChild({ command: '/nonexistent/agent-binary' });
    const exit = await child.exited;
    expect(exit).toEqual({ code: null, signal: null, error: 'spawn /nonexistent/agent-binary ENOENT' });
    expect(await child.dispose()).toEqual(exit);
    expect(child.pid).toBeUndefined();
  });

  it('resolves the exit of a spawn into a missing working directory', async () => {
    const child = spawnChild({ command: process.execPath, args: ['-e', ''], cwd: '/nonexistent/dir' });
    const exit = await child.exited;
    expect(exit.code).toBeNull();
    expect(exit.error).toContain('ENOENT');
  });
});

describe('the scrubbed environment', () => {
  it('passes only allow-listed names and the explicit additions to the child', async () => {
    const child = spawnChild({
      command: process.execPath,
      args: [
        '-e',
        'console.log(JSON.stringify(Object.keys(process.env).filter((k) => !k.startsWith("LC_") && !k.startsWith("NODE_")).sort()))',
      ],
      env: { FAKE_ACP_SCENARIO: 'max-tokens', HOME: '/tmp/agent-home', TERM: undefined },
    });
    spawned.push(child);
    const names = JSON.parse(await firstLine(child.stdout)) as string[];
    expect(names).toContain('PATH');
    expect(names).toContain('FAKE_ACP_SCENARIO');
    expect(names).not.toContain('TERM');
    const allowed = [
      'PATH',
      'HOME',
      'USER',
      'LOGNAME',
      'SHELL',
      'LANG',
      'LANGUAGE',
      'TZ',
      'TMPDIR',
      'TMP',
      'TEMP',
      'FAKE_ACP_SCENARIO',
    ];
    expect(names.filter((name) => !allowed.includes(name))).toEqual([]);
  });

  it('drops secrets and unlisted names, keeps locale and Node settings, applies additions last', () => {
    const parent = {
      PATH: '/usr/bin',
      HOME: '/root',
      LC_ALL: 'C.UTF-8',
      NODE_OPTIONS: '--max-old-space-size=512',
      NODE_AUTH_TOKEN: 'npm-secret',
      OPENAI_API_KEY: 'sk-secret',
      AWS_SECRET_ACCESS_KEY: 'aws-secret',
      GITHUB_TOKEN: 'gh-secret',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer x',
      HTTPS_PROXY: 'http://proxy:3128',
      RANDOM_SETTING: '1',
    };
    expect(scrubbedEnv(parent, { HOME: '/agent', EXTRA: 'yes', PATH: undefined })).toEqual({
      HOME: '/agent',
      LC_ALL: 'C.UTF-8',
      NODE_OPTIONS: '--max-old-space-size=512',
      EXTRA: 'yes',
    });
  });
});
