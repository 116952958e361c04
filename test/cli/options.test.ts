/**
 * What the commands' option parsers share: the flag value checks (hosts,
 * seconds, ports, protocols), the telemetry flags' normalization, and the
 * strict `parseArgs` call. Every refused value is a `UsageError` whose
 * message names the flag, what it takes and what arrived.
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/errors.js';
import {
  hostOf,
  parseOptions,
  portOf,
  protocolOf,
  secondsFlag,
  telemetryFlags,
  telemetryOptions,
} from '../../src/cli/options.js';

/** The UsageError `run` throws: fails when it throws nothing or something else. */
function usageError(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error('expected a UsageError, got none');
}

describe('flag value checks', () => {
  it('hostOf passes a name or address and refuses an empty one or one with spaces', () => {
    expect(hostOf('--host', undefined)).toBeUndefined();
    expect(hostOf('--host', '172.17.0.1')).toBe('172.17.0.1');
    expect(usageError(() => hostOf('--host', 'a b')).message).toBe(
      "--host takes a host name or IP address such as 127.0.0.1, got 'a b'",
    );
    expect(() => hostOf('--host', '')).toThrow(UsageError);
  });

  it('secondsFlag gives milliseconds within its bounds, rounded', () => {
    expect(secondsFlag('--idle', undefined, 1, 60)).toBeUndefined();
    expect(secondsFlag('--idle', ' 2.5 ', 1, 60)).toBe(2500);
    expect(secondsFlag('--idle', '0.0004', 0, 1)).toBe(0);
    expect(usageError(() => secondsFlag('--idle', '61', 1, 60)).message).toBe(
      "--idle takes seconds from 1 to 60, got '61'",
    );
    for (const bad of ['', 'ten', 'NaN', '0.5']) expect(() => secondsFlag('--idle', bad, 1, 60)).toThrow(UsageError);
  });

  it('portOf takes an integer 1..65535', () => {
    expect(portOf(undefined)).toBeUndefined();
    expect(portOf('1')).toBe(1);
    expect(portOf('65535')).toBe(65_535);
    expect(usageError(() => portOf('0')).message).toBe("--port takes a port from 1 to 65535, got '0'");
    for (const bad of ['65536', '80.5', '', 'http']) expect(() => portOf(bad)).toThrow(UsageError);
  });

  it('protocolOf defaults to auto and takes only sdk, acp or auto', () => {
    expect(protocolOf(undefined)).toBe('auto');
    expect(protocolOf('acp')).toBe('acp');
    expect(protocolOf('sdk')).toBe('sdk');
    expect(usageError(() => protocolOf('ACP')).message).toBe("--protocol takes sdk, acp or auto, got 'ACP'");
  });
});

describe('telemetryFlags', () => {
  it('gives only the flags that were set, normalized', () => {
    expect(telemetryFlags({})).toEqual({});
    expect(
      telemetryFlags({
        out: 'o',
        'prometheus-port': '9464',
        'prometheus-host': '0.0.0.0',
        'no-content': true,
        'max-content-length': '0',
        'agent-name': 'coder',
      }),
    ).toEqual({
      out: 'o',
      prometheusPort: 9464,
      prometheusHost: '0.0.0.0',
      captureContent: false,
      maxContentLength: 0,
      agentName: 'coder',
    });
  });

  it('refuses values out of their range, naming the flag and its range', () => {
    expect(usageError(() => telemetryFlags({ 'prometheus-port': '70000' })).message).toBe(
      "--prometheus-port takes an integer 0..65535 (0 is off), got '70000'",
    );
    expect(() => telemetryFlags({ 'prometheus-port': ' ' })).toThrow(UsageError);
    expect(() => telemetryFlags({ 'max-content-length': '-1' })).toThrow(UsageError);
    expect(usageError(() => telemetryFlags({ 'agent-name': ' ' })).message).toMatch(/^--agent-name takes a non-empty/);
  });
});

describe('parseOptions', () => {
  it('parses the telemetry options and positionals', () => {
    expect(parseOptions('replay', ['--out', 'd', '--no-content', 'a.ndjson'], telemetryOptions, true)).toEqual({
      values: { out: 'd', 'no-content': true },
      positionals: ['a.ndjson'],
    });
  });

  it("turns an unknown option or a stray positional into a UsageError pointing at the command's help", () => {
    const unknown = usageError(() => parseOptions('check', ['--nope'], telemetryOptions, false));
    expect(unknown.message).toMatch(/'--nope'.*\(see 'subagent-otel help check'\)$/s);
    expect(unknown.message).not.toMatch(/To specify a positional argument/);
    expect(usageError(() => parseOptions('check', ['file'], telemetryOptions, false)).message).toMatch(
      /\(see 'subagent-otel help check'\)$/,
    );
  });
});
