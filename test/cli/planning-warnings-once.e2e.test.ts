/**
 * Each warning about the telemetry configuration is said once per command,
 * however many parts of the command look at the plan (`check` reads it for
 * its problems, its report and its pipelines; `proxy --agent-telemetry` also
 * for the forwarding of the agent's records). The built CLI is run with one
 * bad value at a time and the warning's lines are counted: exactly one each.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';

/** An environment with no telemetry configuration of the developer's own. */
const CLEAN: NodeJS.ProcessEnv = {
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: '',
  OTEL_TRACES_EXPORTER: '',
  OTEL_METRICS_EXPORTER: '',
  OTEL_BSP_SCHEDULE_DELAY: '',
  SUBAGENT_OTEL_OUT: '',
  SUBAGENT_OTEL_PROMETHEUS_PORT: '',
  SUBAGENT_OTEL_LOG_FILE: '',
};

/** How many lines of `text` contain `needle`. */
function linesWith(text: string, needle: string): number {
  return text.split('\n').filter((line) => line.includes(needle)).length;
}

const dir = mkdtempSync(join(tmpdir(), 'planning-warnings-'));

describe('planning warnings are said once', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('check: an endpoint that is no URL, once per signal', async () => {
    const r = await runCli(['check', '--out', join(dir, 'endpoint')], '', {
      ...CLEAN,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318',
    });
    const stderr = r.stderr.toString('utf8');
    expect(r.code, stderr).toBe(1);
    expect(
      linesWith(stderr, 'OTLP traces endpoint is not a valid URL; traces go to the OTLP-JSON-lines files instead'),
    ).toBe(1);
    expect(
      linesWith(stderr, 'OTLP metrics endpoint is not a valid URL; metrics go to the OTLP-JSON-lines files instead'),
    ).toBe(1);
  });

  it('check: an unsupported exporter name, once', async () => {
    const r = await runCli(['check', '--out', join(dir, 'exporter')], '', { ...CLEAN, OTEL_TRACES_EXPORTER: 'zipkin' });
    const stderr = r.stderr.toString('utf8');
    expect(
      linesWith(
        stderr,
        'OTEL_TRACES_EXPORTER names unsupported exporter "zipkin" (supported: otlp, console, none); skipped',
      ),
    ).toBe(1);
  });

  it('check: an out-of-range OTEL_BSP_SCHEDULE_DELAY, once', async () => {
    const r = await runCli(['check'], '', {
      ...CLEAN,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '-1',
    });
    const stderr = r.stderr.toString('utf8');
    expect(r.code, stderr).toBe(0);
    expect(linesWith(stderr, 'OTEL_BSP_SCHEDULE_DELAY="-1" is not a whole number 0..2147483647; using 5000')).toBe(1);
  });

  it('proxy --agent-telemetry: an unsupported exporter name, once in its log', async () => {
    const log = join(dir, 'proxy.log');
    const r = await runCli(
      ['proxy', '--agent-telemetry', '--out', join(dir, 'proxy-out'), '--', process.execPath, '-e', ''],
      '',
      {
        ...CLEAN,
        OTEL_TRACES_EXPORTER: 'zipkin,otlp',
        SUBAGENT_OTEL_LOG_FILE: log,
        SUBAGENT_OTEL_AGENT_TELEMETRY_WAIT_MS: '0',
      },
    );
    expect(r.code, r.stderr.toString('utf8')).toBe(0);
    expect(
      linesWith(
        readFileSync(log, 'utf8'),
        'OTEL_TRACES_EXPORTER names unsupported exporter "zipkin" (supported: otlp, console, none); skipped',
      ),
    ).toBe(1);
  });
});
