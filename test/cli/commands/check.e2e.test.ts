/**
 * `subagent-otel check` against real destinations (OTLP-JSON-lines files, a
 * real OTLP/HTTP receiver on loopback, a closed port, the Prometheus
 * endpoint), and the proxy's one warning line for an unusable configuration.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSpans, runCli } from '../../helpers/cli.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.js';
import { ROOT } from '../../helpers/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'check-'));
/** An environment with no telemetry configuration of the developer's own. */
const CLEAN = {
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: '',
  OTEL_TRACES_EXPORTER: '',
  OTEL_METRICS_EXPORTER: '',
  SUBAGENT_OTEL_OUT: '',
  SUBAGENT_OTEL_PROMETHEUS_PORT: '',
  SUBAGENT_OTEL_LOG_FILE: '',
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: '',
};

describe('subagent-otel check', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('shows the file destinations, writes the test span there and passes', async () => {
    const out = join(dir, 'files');
    const r = await runCli(['check', '--out', out, '--max-content-length', '100'], '', CLEAN);
    const stdout = r.stdout.toString('utf8');
    expect(r.code, stdout + r.stderr.toString()).toBe(0);
    expect(stdout).toContain(`  traces: file ${join(out, 'traces.jsonl')}\n`);
    expect(stdout).toContain(`  metrics: file ${join(out, 'metrics.jsonl')}\n`);
    expect(stdout).toContain(`  output directory: ${out}\n`);
    expect(stdout).toContain('  content: captured, capped at 100 characters\n');
    expect(stdout).toContain('  Prometheus endpoint: off');
    expect(stdout).toContain(`  ok      traces: file ${join(out, 'traces.jsonl')}\n`);
    expect(stdout).toContain('check passed: all 2 destinations took the test span and metric.');
    expect(readSpans(out).map((s) => s.name)).toEqual(['subagent-otel check']);
    expect(readFileSync(join(out, 'metrics.jsonl'), 'utf8')).toContain('"subagent.checks"');
  });

  it('prints the same report as JSON with --json', async () => {
    const out = join(dir, 'json');
    const r = await runCli(['check', '--json', '--out', out], '', CLEAN);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout.toString('utf8')) as Record<string, unknown>;
    expect(report).toMatchObject({
      destinations: [`traces: file ${join(out, 'traces.jsonl')}`, `metrics: file ${join(out, 'metrics.jsonl')}`],
      outDir: out,
      otlpHeaders: [],
      content: { capture: true },
      serviceName: 'subagent-otel',
      problems: [],
      results: [
        { destination: `traces: file ${join(out, 'traces.jsonl')}`, ok: true },
        { destination: `metrics: file ${join(out, 'metrics.jsonl')}`, ok: true },
      ],
      ok: true,
    });
  });

  it('sends through OTLP/HTTP with the headers, and never prints header values or URL credentials', async () => {
    const endpoint = receiver.endpoint.replace('http://', 'http://user:pa55word@');
    const r = await runCli(['check', '--no-content'], '', {
      ...CLEAN,
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=s3cret-value',
    });
    const stdout = r.stdout.toString('utf8');
    expect(r.code, stdout + r.stderr.toString()).toBe(0);
    expect(stdout).toContain(`  ok      traces: OTLP/HTTP protobuf ${receiver.endpoint}/v1/traces\n`);
    expect(stdout).toContain(`  ok      metrics: OTLP/HTTP protobuf ${receiver.endpoint}/v1/metrics\n`);
    expect(stdout).toContain('  OTLP headers: x-api-key (values not shown)\n');
    expect(stdout).toContain('  content: not captured');
    expect(stdout + r.stderr.toString()).not.toMatch(/s3cret-value|pa55word/);
    expect(receiver.acceptedSpans().map((s) => s.name)).toContain('subagent-otel check');
    expect(receiver.acceptedMetricPoints().map((p) => p.name)).toContain('subagent.checks');
    const traced = await receiver.waitFor((req) => req.path === '/v1/traces');
    expect(traced.headers['x-api-key']).toBe('s3cret-value');
  });

  it('reports the exact failure of a collector that is not there and exits 1', async () => {
    const dead = await startOtlpReceiver({ kind: 'refuse' });
    const r = await runCli(['check'], '', {
      ...CLEAN,
      OTEL_EXPORTER_OTLP_ENDPOINT: dead.endpoint,
      SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '1500',
    });
    await dead.close();
    const stdout = r.stdout.toString('utf8');
    expect(r.code, stdout).toBe(1);
    expect(stdout).toContain(
      `  FAILED  traces: OTLP/HTTP protobuf ${dead.endpoint}/v1/traces: connect ECONNREFUSED 127.0.0.1:${dead.port}`,
    );
    expect(stdout).toContain('check failed: 2 of 2 destinations did not take the test data.');
  });

  it('names an output directory that cannot be created', async () => {
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'not a directory');
    const r = await runCli(['check', '--out', join(blocker, 'out')], '', CLEAN);
    const stdout = r.stdout.toString('utf8');
    expect(r.code).toBe(1);
    expect(stdout).toContain(`  - cannot create the output directory ${join(blocker, 'out')} (ENOTDIR)\n`);
    expect(stdout).toContain(`  FAILED  traces: file ${join(blocker, 'out', 'traces.jsonl')}: file export failed`);
  });

  it('exits 1 when nothing would be delivered', async () => {
    const r = await runCli(['check'], '', { ...CLEAN, OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' });
    const stdout = r.stdout.toString('utf8');
    expect(r.code).toBe(1);
    expect(stdout).toContain('  traces: none\n  metrics: none\n');
    expect(stdout).toContain('check failed: nothing would be delivered');
  });

  it('flags an unsupported exporter name and an endpoint that is no URL', async () => {
    const r = await runCli(['check', '--out', join(dir, 'flags')], '', {
      ...CLEAN,
      OTEL_TRACES_EXPORTER: 'jaeger',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318',
    });
    const stdout = r.stdout.toString('utf8');
    expect(r.code).toBe(1);
    expect(stdout).toContain(
      '  - OTEL_TRACES_EXPORTER names "jaeger", which is not supported (use otlp, console, none)\n',
    );
    expect(stdout).toContain('  - OTEL_EXPORTER_OTLP_ENDPOINT is not a URL such as http://localhost:4318\n');
    // The plan refuses the same endpoint the check names (one validation): metrics go to the files instead of failing at export.
    expect(stdout).toContain(`  metrics: file ${join(dir, 'flags', 'metrics.jsonl')}\n`);
    expect(stdout).not.toContain('FAILED');
    expect(stdout).toContain(
      'check failed: the test data was delivered, but the configuration has the problems above.',
    );
  });

  it('scrapes its own Prometheus endpoint for the test metric', async () => {
    const r = await runCli(['check', '--out', join(dir, 'prom'), '--prometheus-port', '0'], '', CLEAN);
    const stdout = r.stdout.toString('utf8');
    // Port 0 means off for the flag; the endpoint is exercised with a real free port below.
    expect(stdout).toContain('  Prometheus endpoint: off');
    const port = await freePort();
    const on = await runCli(['check', '--out', join(dir, 'prom'), '--prometheus-port', String(port)], '', CLEAN);
    const text = on.stdout.toString('utf8');
    expect(on.code, text + on.stderr.toString()).toBe(0);
    expect(text).toContain(`  ok      metrics: Prometheus http://127.0.0.1:${port}/metrics\n`);
  });
});

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

describe('the proxy with an unusable telemetry configuration', () => {
  const echo = join(ROOT, 'test', 'helpers', 'echo-child.cjs');

  it('forwards the agent untouched and writes one line to stderr and to its log file', async () => {
    const blocker = join(dir, 'blocker');
    writeFileSync(blocker, 'x');
    const log = join(dir, 'proxy.log');
    const input = '{"jsonrpc":"2.0","id":1,"method":"ping"}\nnot json\n';
    const r = await runCli(
      ['proxy', '--out', join(blocker, 'out'), '--', process.execPath, echo, join(dir, 'record')],
      input,
      { ...CLEAN, SUBAGENT_OTEL_LOG_FILE: log },
    );
    expect(r.code).toBe(0);
    expect(r.stdout.toString('utf8')).toBe(input);
    expect(readFileSync(join(dir, 'record'), 'utf8')).toBe(input);
    const line = `subagent-otel proxy: telemetry configuration problem: cannot create the output directory ${join(blocker, 'out')} (ENOTDIR); the agent runs unaffected. See where telemetry goes with: subagent-otel check (same options and environment)`;
    // The line and the child's own stderr race; the child's bytes are whole and the line is there once.
    const stderr = r.stderr.toString('utf8');
    expect(stderr.split(`${line}\n`)).toHaveLength(2);
    expect(stderr.replace(`${line}\n`, '')).toBe('echo-child: started \u00e9\n');
    const logged = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.includes('subagent-otel proxy:'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain(line);
  });

  it('names a capture file that cannot be written, and still forwards everything', async () => {
    const capture = join(dir, 'no-such-dir', 'capture.ndjson');
    const input = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
    const r = await runCli(
      [
        'proxy',
        '--out',
        join(dir, 'cap-out'),
        '--capture',
        capture,
        '--',
        process.execPath,
        echo,
        join(dir, 'record-cap'),
      ],
      input,
      CLEAN,
    );
    expect(r.code).toBe(0);
    expect(r.stdout.toString('utf8')).toBe(input);
    const lines = r.stderr
      .toString('utf8')
      .split('\n')
      .filter((l) => l.startsWith('subagent-otel proxy:'));
    expect(lines).toEqual([
      `subagent-otel proxy: telemetry configuration problem: cannot write the capture file ${capture} (ENOENT); the agent runs unaffected. See where telemetry goes with: subagent-otel check (same options and environment); keep the details with SUBAGENT_OTEL_LOG_FILE=<file>`,
    ]);
  });

  it('says once at exit that a dead collector got nothing', async () => {
    const dead = await startOtlpReceiver({ kind: 'refuse' });
    const prompt = [
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/tmp","provider":"p","model":"m"}}',
      '{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","contentBlocks":[{"type":"text","text":"scenario:completed"}]}}',
      '{"jsonrpc":"2.0","id":3,"method":"shutdown"}',
      '',
    ].join('\n');
    const r = await runCli(
      ['proxy', '--', process.execPath, join(ROOT, 'dist', 'fixtures', 'sdk-runtime.js')],
      prompt,
      {
        ...CLEAN,
        OTEL_EXPORTER_OTLP_ENDPOINT: dead.endpoint,
        SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '1000',
      },
    );
    await dead.close();
    expect(r.code).toBe(0);
    const lines = r.stderr
      .toString('utf8')
      .split('\n')
      .filter((l) => l.startsWith('subagent-otel proxy:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^subagent-otel proxy: telemetry was not delivered: [1-9]\d* span\(s\) and \d+ metric batch\(es\) dropped \(first problem: /,
    );
    expect(lines[0]).toContain(
      'See where telemetry goes with: subagent-otel check (same options and environment); keep the details with SUBAGENT_OTEL_LOG_FILE=<file>',
    );
  });

  it('tells the truth about stderr and names check and SUBAGENT_OTEL_LOG_FILE in its help', async () => {
    const r = await runCli(['proxy', '--help']);
    const help = r.stdout.toString('utf8').replace(/\s+/g, ' ');
    expect(help).toContain('subagent-otel check');
    expect(help).toContain('SUBAGENT_OTEL_LOG_FILE');
    expect(help).not.toContain('prints nothing');
    expect(help).toContain('one line when the agent cannot be started');
    expect(help).toContain('OTEL_TRACES_EXPORTER=console');
  });

  it('names check and SUBAGENT_OTEL_LOG_FILE in the main help', async () => {
    const r = await runCli(['--help']);
    const help = r.stdout.toString('utf8').replace(/\s+/g, ' ');
    expect(help).toContain(
      'subagent-otel check [options] show where telemetry goes and send a test span and metric there',
    );
    expect(help).toContain('SUBAGENT_OTEL_LOG_FILE');
  });
});
