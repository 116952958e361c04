/**
 * `withParentDeathSignal`: on Linux with util-linux `setpriv`, the command
 * found on the child's PATH is spawned through `setpriv --pdeathsig SIGKILL
 * --`; otherwise, or when the command is not found, it is left unchanged so
 * that it fails to spawn as it would have.
 */
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withParentDeathSignal } from '../../src/backend/parent-death.js';

/** Where this machine's setpriv is, looked up the way the module's contract names (`/usr/bin`, then `/bin`). */
function setprivHere(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  return ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

let bin: string;
beforeEach(() => {
  bin = mkdtempSync(join(tmpdir(), 'parent-death-'));
  writeFileSync(join(bin, 'agent'), '#!/bin/sh\n', { mode: 0o755 });
  writeFileSync(join(bin, 'not-executable'), '', { mode: 0o644 });
});
afterEach(() => rmSync(bin, { recursive: true, force: true }));

describe('withParentDeathSignal', () => {
  const setpriv = setprivHere();

  it('wraps a command found on the PATH, or by path from cwd, in setpriv where there is one', () => {
    const wrapped = (path: string, args: string[]) =>
      setpriv === undefined ? undefined : { command: setpriv, args: ['--pdeathsig', 'SIGKILL', '--', path, ...args] };
    expect(withParentDeathSignal('agent', ['--acp'], { PATH: `/nowhere:${bin}` })).toEqual(
      wrapped(join(bin, 'agent'), ['--acp']) ?? { command: 'agent', args: ['--acp'] },
    );
    expect(withParentDeathSignal('./agent', [], {}, bin)).toEqual(
      wrapped(join(bin, 'agent'), []) ?? { command: './agent', args: [] },
    );
  });

  it('leaves a command it cannot find, or cannot run, unchanged', () => {
    expect(withParentDeathSignal('no-such-agent', ['x'], { PATH: bin })).toEqual({
      command: 'no-such-agent',
      args: ['x'],
    });
    expect(withParentDeathSignal('not-executable', [], { PATH: bin })).toEqual({ command: 'not-executable', args: [] });
    expect(withParentDeathSignal('agent', [], {})).toEqual({ command: 'agent', args: [] });
  });
});
