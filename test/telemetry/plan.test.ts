/**
 * The environment-to-plan mapping of the telemetry (`planTelemetry`): where
 * each signal goes (OTLP URL and protocol, the OTLP-JSON-lines default,
 * console, none), the metric temporality and the Prometheus endpoint,
 * before anything is built.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planTelemetry } from '../../src/telemetry/plan.js';

describe('planTelemetry', () => {
  it('joins the general endpoint with the signal path and takes signal endpoints as they are', () => {
    const plan = planTelemetry({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'https://metrics.example/ingest',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-tenant=t1',
        OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'x-tenant=t2',
        OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      },
    });
    // Headers and timeout are the exporters' to read: the plan holds only the project's decisions.
    expect(plan.traces).toEqual({
      otlp: { protocol: 'http/protobuf', url: 'http://collector:4318/v1/traces' },
      console: false,
    });
    expect(plan.metrics).toEqual({
      otlp: { protocol: 'http/protobuf', url: 'https://metrics.example/ingest' },
      console: false,
    });
  });

  it('takes the protocol per signal, then OTEL_EXPORTER_OTLP_PROTOCOL, then http/protobuf; gRPC uses the endpoint as it is', () => {
    const plan = planTelemetry({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json',
      },
    });
    expect(plan.traces.otlp).toEqual({ protocol: 'grpc', url: 'http://collector:4317' });
    expect(plan.metrics.otlp).toEqual({ protocol: 'http/json', url: 'http://collector:4317/v1/metrics' });
    const unknown = planTelemetry({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'carrier-pigeon' },
    });
    expect(unknown.traces.otlp?.protocol).toBe('http/protobuf');
  });

  it('sends a signal without an endpoint to the embedded default and honours console and none per signal', () => {
    const plan = planTelemetry({
      env: { SUBAGENT_OTEL_OUT: '/var/tmp/so', OTEL_TRACES_EXPORTER: 'otlp,console', OTEL_METRICS_EXPORTER: 'none' },
    });
    expect(plan.traces).toEqual({ fileDir: '/var/tmp/so', console: true });
    expect(plan.metrics).toEqual({ console: false });
    expect(planTelemetry({ env: {} }).defaultOutDir).toBe(join(process.cwd(), 'subagent-otel-out'));
  });

  it('prefers delta metrics unless OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE names cumulative or lowmemory', () => {
    const temporality = (value?: string) =>
      planTelemetry({ env: value === undefined ? {} : { OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: value } })
        .temporality;
    expect(temporality()).toBe('delta');
    expect(temporality('')).toBe('delta');
    expect(temporality('  ')).toBe('delta');
    expect(temporality('delta')).toBe('delta');
    expect(temporality(' Cumulative ')).toBe('cumulative');
    expect(temporality('LOWMEMORY')).toBe('lowmemory');
    expect(temporality('monthly')).toBe('delta');
  });

  it('enables the Prometheus endpoint from SUBAGENT_OTEL_PROMETHEUS_PORT on loopback, and keeps it off for bad values', () => {
    expect(planTelemetry({ env: { SUBAGENT_OTEL_PROMETHEUS_PORT: '9464' } }).prometheus).toEqual({
      port: 9464,
      host: '127.0.0.1',
    });
    expect(planTelemetry({ env: { SUBAGENT_OTEL_PROMETHEUS_PORT: 'http' } }).prometheus).toBeUndefined();
    expect(planTelemetry({ env: {}, prometheusPort: 0 }).prometheus).toBeUndefined();
    expect(
      planTelemetry({ env: { SUBAGENT_OTEL_PROMETHEUS_PORT: '9464' }, prometheusPort: 9999, prometheusHost: '0.0.0.0' })
        .prometheus,
    ).toEqual({
      port: 9999,
      host: '0.0.0.0',
    });
  });
});
