/**
 * Problems said once per kind (`OnceReporter`) through the diag logger, with
 * a bound on the kinds it remembers and a throwing logger contained; and
 * `describeError`, which never throws.
 */
import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { OnceReporter, describeError } from '../../src/telemetry/report-once.js';

/** Installs a diag logger that records `level message` lines (component loggers prefix their namespace). */
function recordDiag(): string[] {
  const lines: string[] = [];
  const record =
    (level: string) =>
    (...args: unknown[]) =>
      lines.push(`${level} ${args.map(String).join(' ')}`);
  const logger: DiagLogger = {
    error: record('error'),
    warn: record('warn'),
    info: record('info'),
    debug: record('debug'),
    verbose: record('verbose'),
  };
  diag.disable();
  diag.setLogger(logger, DiagLogLevel.ALL);
  lines.length = 0; // what setLogger itself said
  return lines;
}

afterEach(() => diag.disable());

describe('OnceReporter', () => {
  it('logs the first report of each kind at its level and says whether it logged', () => {
    const lines = recordDiag();
    const reporter = new OnceReporter();
    expect(reporter.report('warn', 'dead-collector', 'collector unreachable')).toBe(true);
    expect(reporter.report('error', 'dead-collector', 'collector unreachable again')).toBe(false);
    expect(reporter.report('info', 'other', 'something else')).toBe(true);
    expect(lines).toEqual([
      expect.stringMatching(/^warn .*collector unreachable$/),
      expect.stringMatching(/^info .*something else$/),
    ]);
    expect(lines[0]).toContain('subagent-otel');
  });

  it('reports kinds past its bound every time instead of remembering them', () => {
    recordDiag();
    const reporter = new OnceReporter(1);
    expect(reporter.report('warn', 'a', 'first')).toBe(true);
    expect(reporter.report('warn', 'a', 'first')).toBe(false);
    expect(reporter.report('warn', 'b', 'second')).toBe(true);
    expect(reporter.report('warn', 'b', 'second')).toBe(true);
  });

  it('contains a diag logger that throws', () => {
    let installed = false;
    const boom = () => {
      if (installed) throw new Error('logger broke');
    };
    diag.disable();
    diag.setLogger({ error: boom, warn: boom, info: boom, debug: boom, verbose: boom }, DiagLogLevel.ALL);
    installed = true;
    expect(() => diag.error('direct')).toThrow('logger broke');
    expect(new OnceReporter().report('error', 'k', 'm')).toBe(true);
    installed = false;
  });
});

describe('describeError', () => {
  it("gives an Error's message, a value as text, and words for what cannot be printed", () => {
    expect(describeError(new Error('ECONNREFUSED 127.0.0.1:4318'))).toBe('ECONNREFUSED 127.0.0.1:4318');
    expect(describeError(42)).toBe('42');
    const exotic = {
      toString() {
        throw new Error('no');
      },
    };
    expect(describeError(exotic)).toBe('unprintable error');
  });
});
