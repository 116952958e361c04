/**
 * The observer's own Prometheus endpoint, scraped over real HTTP on
 * 127.0.0.1: the run counter appears as `subagent_runs_total` with the stop
 * reason label, on its own and wired through createTelemetry.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/observe/run-record.js';
import { startPrometheusEndpoint } from '../../src/telemetry/prometheus-endpoint.js';
import { RunTelemetry } from '../../src/telemetry/run-telemetry.js';
import { createTelemetry } from '../../src/telemetry/setup.js';

const T0 = 1_700_000_000_000;

function record(runId: string, stopReason: string): RunRecord {
  return {
    runId,
    source: 'sdk-subagent',
    agentName: 'reviewer',
    startTime: T0,
    provider: 'deepseek',
    endTime: T0 + 1000,
    stopReason,
    output: [{ type: 'text', text: 'partial' }],
    outputSource: 'stream',
    emptyMessages: 1,
    usage: {
      inputTokens: 1,
      outputTokens: 2,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: true,
    },
    steps: [],
    toolCalls: [],
  };
}

/** A loopback port nothing listens on right now (bound by the system, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('Prometheus endpoint', () => {
  it('exposes subagent_runs_total by stop reason on 127.0.0.1/metrics and answers 404 elsewhere', async () => {
    const errors: string[] = [];
    const endpoint = startPrometheusEndpoint({ port: 0 }, (message) => errors.push(message));
    const meterProvider = new MeterProvider({ readers: [endpoint.reader] });
    const runs = new RunTelemetry({
      tracer: new TracerProvider().getTracer('test'),
      meter: meterProvider.getMeter('test'),
      content: { capture: true },
    });
    runs.onRunEnd(record('a', 'max-tokens'));
    runs.onRunEnd(record('b', 'completed'));
    runs.onRunEnd(record('c', 'completed'));

    const url = await endpoint.ready;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const response = await fetch(url as string);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/^subagent_runs_total\{[^}]*subagent_stop_reason="max-tokens"[^}]*\} 1$/m);
    expect(text).toMatch(/^subagent_runs_total\{[^}]*subagent_stop_reason="completed"[^}]*\} 2$/m);
    // The default names are v0.1.0's (decision 0121): a run in another process is a client operation, with the
    // conventions' bucket advice for gen_ai.invoke_agent.duration (decision 0095): the 1 s runs land between 0.8 and 1.6.
    expect(text).toContain(
      'gen_ai_client_operation_duration_bucket{gen_ai_operation_name="invoke_agent",gen_ai_provider_name="deepseek",gen_ai_agent_name="reviewer",le="0.8"} 0',
    );
    expect(text).toContain(
      'gen_ai_client_operation_duration_bucket{gen_ai_operation_name="invoke_agent",gen_ai_provider_name="deepseek",gen_ai_agent_name="reviewer",le="1.6"} 2',
    );
    expect(text).not.toContain('gen_ai_invoke_agent_duration_bucket');
    // Three runs of 1 input token each, counted once per run (no steps), and no gen_ai_client_token_usage.
    expect(text).toMatch(
      /^gen_ai_client_inference_usage_input_tokens_total\{[^}]*gen_ai_token_modality="unknown"[^}]*\} 3$/m,
    );
    expect(text).not.toContain('gen_ai_client_token_usage');
    expect(text).not.toContain('otel_scope_name');
    expect((await fetch((url as string).replace('/metrics', '/other'))).status).toBe(404);

    await meterProvider.shutdown();
    await endpoint.close();
    expect(errors).toEqual([]);
  });

  it('reports a port it cannot listen on instead of throwing', async () => {
    const first = startPrometheusEndpoint({ port: 0 });
    const taken = Number(new URL((await first.ready) as string).port);
    const errors: string[] = [];
    const second = startPrometheusEndpoint({ port: taken }, (message) => errors.push(message));
    expect(await second.ready).toBeUndefined();
    expect(errors).toEqual([
      expect.stringMatching(new RegExp(`could not listen on http://127\\.0\\.0\\.1:${taken}/metrics: .*EADDRINUSE`)),
    ]);
    await second.close();
    await first.close();
  });

  it('is served from the same meter provider as the runs when createTelemetry enables it', async () => {
    const port = await freePort();
    const telemetry = createTelemetry({
      prometheusPort: port,
      env: { OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' },
    });
    expect(telemetry.describeDestinations()).toEqual([
      'traces: none',
      `metrics: Prometheus http://127.0.0.1:${port}/metrics`,
    ]);
    telemetry.runs.onRunEnd(record('a', 'max-tokens'));
    expect(await telemetry.prometheus?.ready).toBe(`http://127.0.0.1:${port}/metrics`);
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/^subagent_runs_total\{[^}]*subagent_stop_reason="max-tokens"[^}]*\} 1$/m);
    expect(text).toMatch(/^target_info\{[^}]*service_name="subagent-otel"[^}]*\} 1$/m);
    expect(await telemetry.shutdown()).toEqual({
      timedOut: false,
      errors: [],
      dropped: { traces: 0, metrics: 0 },
      refused: { traces: 0, metrics: 0 },
      outboxed: { traces: 0, metrics: 0, runs: 0 },
      fromOutbox: { requests: 0, items: 0, runs: 0 },
    });
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});
