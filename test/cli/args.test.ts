import { describe, expect, it } from 'vitest';
import { helpText, parseCommandLine } from '../../src/cli/args.js';
import { UsageError } from '../../src/cli/errors.js';

describe('parseCommandLine', () => {
  it.each<[string, string[], unknown]>([
    ['no arguments', [], { name: 'help' }],
    ['--help', ['--help'], { name: 'help' }],
    ['help with a topic', ['help', 'proxy'], { name: 'help', topic: 'proxy' }],
    ['--version', ['--version'], { name: 'version' }],
    [
      'proxy with defaults',
      ['proxy', '--', 'node', 'rt.js', '--flag'],
      { name: 'proxy', protocol: 'auto', command: 'node', args: ['rt.js', '--flag'] },
    ],
    [
      'proxy with every option',
      [
        'proxy',
        '--out',
        'o',
        '--protocol',
        'acp',
        '--capture',
        'c.ndjson',
        '--prometheus-port',
        '9464',
        '--no-content',
        '--max-content-length',
        '100',
        '--agent-name',
        'coder',
        '--',
        'agent',
      ],
      {
        name: 'proxy',
        protocol: 'acp',
        capture: 'c.ndjson',
        command: 'agent',
        args: [],
        out: 'o',
        prometheusPort: 9464,
        captureContent: false,
        maxContentLength: 100,
        agentName: 'coder',
      },
    ],
    [
      'child arguments that look like our options',
      ['proxy', '--', 'agent', '--out', 'x', '--help'],
      { name: 'proxy', protocol: 'auto', command: 'agent', args: ['--out', 'x', '--help'] },
    ],
    ['proxy --help', ['proxy', '--help'], { name: 'help', topic: 'proxy' }],
    [
      'replay with files',
      ['replay', 'a.jsonl', 'dir', '--json'],
      { name: 'replay', paths: ['a.jsonl', 'dir'], json: true, protocol: 'auto' },
    ],
    [
      'replay with --jobs',
      ['replay', '--jobs', '3', 'dir'],
      { name: 'replay', paths: ['dir'], json: false, protocol: 'auto', jobs: 3 },
    ],
    [
      'replay without progress',
      ['replay', '--no-progress', 'x'],
      { name: 'replay', paths: ['x'], json: false, progress: false, protocol: 'auto' },
    ],
    ['demo', ['demo'], { name: 'demo', json: false }],
    ['demo --out', ['demo', '--out', 'tele'], { name: 'demo', json: false, out: 'tele' }],
    [
      'proxy --prometheus-host with a port',
      ['proxy', '--prometheus-port', '9464', '--prometheus-host', '0.0.0.0', '--', 'agent'],
      { name: 'proxy', protocol: 'auto', command: 'agent', args: [], prometheusPort: 9464, prometheusHost: '0.0.0.0' },
    ],
    [
      'replay --prometheus-host with an IPv6 address',
      ['replay', '--prometheus-host', '::1', 'x'],
      { name: 'replay', paths: ['x'], json: false, protocol: 'auto', prometheusHost: '::1' },
    ],
    [
      'demo --prometheus-host=<host>',
      ['demo', '--prometheus-host=172.17.0.1'],
      { name: 'demo', json: false, prometheusHost: '172.17.0.1' },
    ],
    ['view without paths', ['view'], { name: 'view', paths: [] }],
    [
      'view with paths, a port and a host',
      ['view', '--port', '8080', '--host', '0.0.0.0', 'a', 'b'],
      { name: 'view', paths: ['a', 'b'], port: 8080, host: '0.0.0.0' },
    ],
    ['view --help', ['view', '--help'], { name: 'help', topic: 'view' }],
  ])('maps %s', (_name, argv, expected) => {
    expect(parseCommandLine(argv)).toEqual(expected);
  });

  it.each<[string, string[], string]>([
    [
      'an unknown command',
      ['serve'],
      "unknown command 'serve'; commands: demo, proxy, replay, watch, setup, check, view (see 'subagent-otel --help')",
    ],
    [
      'proxy without a command',
      ['proxy', '--out', 'x'],
      "proxy needs the agent command after '--', e.g. subagent-otel proxy -- node runtime.js",
    ],
    [
      'proxy with the command before --',
      ['proxy', 'node', 'rt.js'],
      "unexpected 'node' before '--': put the agent command after '--', e.g. subagent-otel proxy -- node rt.js",
    ],
    ['an unknown option', ['demo', '--fast'], "Unknown option '--fast' (see 'subagent-otel help demo')"],
    [
      'a bad port',
      ['proxy', '--prometheus-port', '70000', '--', 'a'],
      "--prometheus-port takes an integer 0..65535 (0 is off), got '70000'",
    ],
    [
      'an empty Prometheus host',
      ['proxy', '--prometheus-host', '', '--', 'a'],
      "--prometheus-host takes a host name or IP address such as 127.0.0.1, got ''",
    ],
    [
      'a Prometheus host with a space',
      ['demo', '--prometheus-host', '0.0.0.0 9464'],
      "--prometheus-host takes a host name or IP address such as 127.0.0.1, got '0.0.0.0 9464'",
    ],
    [
      'a missing Prometheus host',
      ['demo', '--prometheus-host'],
      "Option '--prometheus-host <value>' argument missing (see 'subagent-otel help demo')",
    ],
    ['a bad protocol', ['proxy', '--protocol', 'grpc', '--', 'a'], "--protocol takes sdk, acp or auto, got 'grpc'"],
    [
      'replay without paths',
      ['replay'],
      'replay needs at least one file or directory, e.g. subagent-otel replay ./sessions',
    ],
    [
      'a missing option value',
      ['replay', '--out'],
      "Option '--out <value>' argument missing (see 'subagent-otel help replay')",
    ],
    [
      'no threads for replay',
      ['replay', '--jobs', '0', 'dir'],
      "--jobs takes a number of threads from 1 to 64 (1: no worker threads), got '0'",
    ],
    [
      'a replay thread count that is no number',
      ['replay', '--jobs', 'abc', 'dir'],
      "--jobs takes a number of threads from 1 to 64 (1: no worker threads), got 'abc'",
    ],
    [
      'a fractional replay thread count',
      ['replay', '--jobs', '1.5', 'dir'],
      "--jobs takes a number of threads from 1 to 64 (1: no worker threads), got '1.5'",
    ],
    [
      'too many replay threads',
      ['replay', '--jobs', '65', 'dir'],
      "--jobs takes a number of threads from 1 to 64 (1: no worker threads), got '65'",
    ],
    ['a view port out of range', ['view', '--port', '0'], "--port takes a port from 1 to 65535, got '0'"],
    ['an empty view host', ['view', '--host', ''], "--host takes a host name or IP address such as 127.0.0.1, got ''"],
  ])('rejects %s with a usage error that says what to do', (_name, argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(new UsageError(message));
  });
});

describe('helpText', () => {
  it('has a page per command and rejects unknown topics', () => {
    expect(helpText('proxy')).toMatch(/^Usage: subagent-otel proxy \[options\] -- <command> \[args\.\.\.\]/);
    expect(helpText('replay')).toMatch(/^Usage: subagent-otel replay/);
    expect(helpText('demo')).toMatch(/^Usage: subagent-otel demo/);
    expect(helpText('view')).toMatch(/^Usage: subagent-otel view \[options\] \[path\.\.\.\]/);
    expect(helpText()).toContain('subagent-otel view [options] [path...]');
    expect(() => helpText('nope')).toThrow(UsageError);
  });

  it.each(['proxy', 'replay', 'demo'])(
    'documents --prometheus-host, its variable and its default on the %s page',
    (topic) => {
      expect(helpText(topic)).toContain(
        '--prometheus-host <host>    listen address of that endpoint (env SUBAGENT_OTEL_PROMETHEUS_HOST;\n                              default 127.0.0.1)',
      );
    },
  );
});

describe('setup and watch --daemon', () => {
  it('parses setup with its options, and refuses what it does not take', () => {
    expect(parseCommandLine(['setup', 'claude-code'])).toEqual({
      name: 'setup',
      agent: 'claude-code',
      remove: false,
      dryRun: false,
    });
    expect(parseCommandLine(['setup', 'codex', '--remove', '--dry-run', '--project', '.'])).toEqual({
      name: 'setup',
      agent: 'codex',
      remove: true,
      dryRun: true,
      project: '.',
    });
    expect(parseCommandLine(['setup', 'codex', '--out', 'o', '--no-content'])).toEqual({
      name: 'setup',
      agent: 'codex',
      remove: false,
      dryRun: false,
      out: 'o',
      captureContent: false,
    });
    expect(() => parseCommandLine(['setup'])).toThrow('setup needs the agent: claude-code or codex');
    expect(() => parseCommandLine(['setup', 'gemini'])).toThrow(/got 'gemini' \(Gemini CLI has no subagent hooks/);
    expect(() => parseCommandLine(['setup', 'codex', '--remove', '--out', 'o'])).toThrow(
      '--remove takes no telemetry options',
    );
    expect(parseCommandLine(['help', 'setup'])).toEqual({ name: 'help', topic: 'setup' });
    expect(helpText('hook')).toContain('exits 0 at once');
  });

  it('takes no directories with --daemon, and needs them without', () => {
    expect(parseCommandLine(['watch', '--daemon'])).toMatchObject({ name: 'watch', dirs: [], daemon: true });
    expect(() => parseCommandLine(['watch', '--daemon', '/x'])).toThrow("it takes no directories, got '/x'");
    expect(parseCommandLine(['watch', '/x'])).toMatchObject({ daemon: false });
  });
});
