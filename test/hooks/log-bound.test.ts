/** The watcher's log kept bounded (`boundLog`, `keepLogBounded`): moved aside past its limit, emptied in place. */
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { boundLog, isFileAt, keepLogBounded, LOG_LIMIT_BYTES } from '../../src/hooks/log-bound.js';

let root: string;
let log: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'log-bound-'));
  log = join(root, 'watch.log');
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(root, { recursive: true, force: true });
});

describe('boundLog', () => {
  it('leaves a log at or under the limit alone, and creates none when there is none', () => {
    expect(boundLog(log, 10)).toBeUndefined();
    expect(existsSync(log)).toBe(false);
    writeFileSync(log, '0123456789');
    expect(boundLog(log, 10)).toBeUndefined();
    expect(readFileSync(log, 'utf8')).toBe('0123456789');
    expect(existsSync(`${log}.1`)).toBe(false);
  });

  it('moves a log past the limit to .1, replacing the older one, and empties it for the writer that holds it open', () => {
    writeFileSync(`${log}.1`, 'older\n');
    writeFileSync(log, 'line 1\nline 2\n');
    const writer = openSync(log, 'a');
    try {
      expect(boundLog(log, 10)).toBeUndefined();
      expect(readFileSync(`${log}.1`, 'utf8')).toBe('line 1\nline 2\n');
      expect(readFileSync(log, 'utf8')).toBe('');
      // Append mode: the writer's next line lands at the start of the emptied file.
      writeSync(writer, 'line 3\n');
      expect(readFileSync(log, 'utf8')).toBe('line 3\n');
    } finally {
      closeSync(writer);
    }
  });

  it('says which file could not be moved aside, and keeps the log', () => {
    writeFileSync(log, 'x'.repeat(20));
    mkdirSync(`${log}.1`);
    const problem = boundLog(log, 10);
    expect(problem).toContain(`cannot move the log ${log} (20 bytes) aside to ${log}.1`);
    expect(readFileSync(log, 'utf8')).toBe('x'.repeat(20));
  });

  it('bounds at 8 MiB by default', () => {
    expect(LOG_LIMIT_BYTES).toBe(8 * 1024 * 1024);
    writeFileSync(log, Buffer.alloc(LOG_LIMIT_BYTES, 'a'));
    expect(boundLog(log)).toBeUndefined();
    expect(existsSync(`${log}.1`)).toBe(false);
    writeFileSync(log, 'a', { flag: 'a' });
    expect(boundLog(log)).toBeUndefined();
    expect(readFileSync(log).length).toBe(0);
    expect(readFileSync(`${log}.1`).length).toBe(LOG_LIMIT_BYTES + 1);
  });
});

describe('isFileAt', () => {
  it('tells whether a descriptor is the named file', () => {
    writeFileSync(log, '');
    writeFileSync(join(root, 'other'), '');
    const fd = openSync(log, 'a');
    try {
      expect(isFileAt(fd, log)).toBe(true);
      expect(isFileAt(fd, join(root, 'other'))).toBe(false);
      expect(isFileAt(fd, join(root, 'missing'))).toBe(false);
    } finally {
      closeSync(fd);
    }
  });
});

describe('keepLogBounded', () => {
  it('bounds the log at once and then at every interval until stopped', () => {
    vi.useFakeTimers();
    writeFileSync(log, 'x'.repeat(20));
    const problems: string[] = [];
    const stop = keepLogBounded(log, (problem) => problems.push(problem), 1000, 10);
    expect(readFileSync(log, 'utf8')).toBe('');
    writeFileSync(log, 'y'.repeat(20));
    vi.advanceTimersByTime(999);
    expect(readFileSync(log, 'utf8')).toBe('y'.repeat(20));
    vi.advanceTimersByTime(1);
    expect(readFileSync(log, 'utf8')).toBe('');
    expect(readFileSync(`${log}.1`, 'utf8')).toBe('y'.repeat(20));
    stop();
    writeFileSync(log, 'z'.repeat(20));
    vi.advanceTimersByTime(5000);
    expect(readFileSync(log, 'utf8')).toBe('z'.repeat(20));
    expect(problems).toEqual([]);
  });

  it('says each problem it meets', () => {
    vi.useFakeTimers();
    writeFileSync(log, 'x'.repeat(20));
    mkdirSync(`${log}.1`);
    const problems: string[] = [];
    const stop = keepLogBounded(log, (problem) => problems.push(problem), 1000, 10);
    vi.advanceTimersByTime(1000);
    stop();
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain(`cannot move the log ${log}`);
  });
});
