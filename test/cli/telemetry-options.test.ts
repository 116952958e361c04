import { describe, expect, it } from 'vitest';
import { flushBoundMs, telemetryOptions } from '../../src/cli/telemetry-options.js';

describe('telemetryOptions', () => {
  it('maps every flag onto createTelemetry options', () => {
    const env = {};
    expect(
      telemetryOptions({ out: 'o', prometheusPort: 9464, prometheusHost: '127.0.0.2', captureContent: false, maxContentLength: 100 }, env),
    ).toEqual({ env, out: 'o', prometheusPort: 9464, prometheusHost: '127.0.0.2', content: { capture: false, maxLength: 100 } });
  });

  it('takes the Prometheus host from SUBAGENT_OTEL_PROMETHEUS_HOST when the flag is absent, and the flag over it', () => {
    const env = { SUBAGENT_OTEL_PROMETHEUS_HOST: ' 0.0.0.0 ' };
    expect(telemetryOptions({}, env)).toEqual({ env, prometheusHost: '0.0.0.0' });
    expect(telemetryOptions({ prometheusHost: '127.0.0.1' }, env)).toEqual({ env, prometheusHost: '127.0.0.1' });
    expect(telemetryOptions({}, { SUBAGENT_OTEL_PROMETHEUS_HOST: '  ' })).toEqual({ env: { SUBAGENT_OTEL_PROMETHEUS_HOST: '  ' } });
  });
});

describe('flushBoundMs', () => {
  it('takes SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS when it is a positive number, else the command default', () => {
    expect(flushBoundMs({ SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '750' }, 2000)).toBe(750);
    expect(flushBoundMs({}, 2000)).toBe(2000);
    expect(flushBoundMs({ SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: 'soon' }, 2000)).toBe(2000);
    expect(flushBoundMs({ SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '0' }, 5000)).toBe(5000);
  });
});
