import { describe, expect, it } from 'vitest';
import { flushBoundMs, telemetryOptions } from '../../src/cli/telemetry-options.js';
import { planTelemetry } from '../../src/telemetry/setup.js';

describe('telemetryOptions', () => {
  it('maps every flag onto createTelemetry options', () => {
    const env = { XDG_STATE_HOME: '/state' };
    expect(
      telemetryOptions(
        { out: 'o', prometheusPort: 9464, prometheusHost: '127.0.0.2', captureContent: false, maxContentLength: 100 },
        env,
      ),
    ).toEqual({
      env,
      outbox: '/state/subagent-otel/outbox',
      out: 'o',
      prometheusPort: 9464,
      prometheusHost: '127.0.0.2',
      content: { capture: false, maxLength: 100 },
    });
  });

  it('turns the outbox on in the state directory unless SUBAGENT_OTEL_OUTBOX names another folder or says off', () => {
    expect(telemetryOptions({}, { XDG_STATE_HOME: '/s' }).outbox).toBe('/s/subagent-otel/outbox');
    expect(telemetryOptions({}, { SUBAGENT_OTEL_OUTBOX: ' /elsewhere ' }).outbox).toBe('/elsewhere');
    expect(telemetryOptions({}, { SUBAGENT_OTEL_OUTBOX: 'OFF' }).outbox).toBe(false);
  });

  it('leaves SUBAGENT_OTEL_PROMETHEUS_HOST to createTelemetry, which reads it like the library does; the flag wins', () => {
    const env = {
      SUBAGENT_OTEL_PROMETHEUS_HOST: ' 0.0.0.0 ',
      SUBAGENT_OTEL_PROMETHEUS_PORT: '9464',
      SUBAGENT_OTEL_OUTBOX: 'off',
    };
    expect(telemetryOptions({}, env)).toEqual({ env, outbox: false });
    expect(planTelemetry(telemetryOptions({}, env)).prometheus).toEqual({ port: 9464, host: '0.0.0.0' });
    expect(planTelemetry(telemetryOptions({ prometheusHost: '127.0.0.2' }, env)).prometheus).toEqual({
      port: 9464,
      host: '127.0.0.2',
    });
    expect(planTelemetry(telemetryOptions({}, { ...env, SUBAGENT_OTEL_PROMETHEUS_HOST: '  ' })).prometheus).toEqual({
      port: 9464,
      host: '127.0.0.1',
    });
  });
});

describe('flushBoundMs', () => {
  it('takes SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS when it is a positive number, else the command default', () => {
    expect(flushBoundMs({ SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '750' }, 2000)).toBe(750);
    expect(flushBoundMs({}, 2000)).toBe(2000);
    expect(flushBoundMs({ SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: 'soon' }, 2000)).toBe(2000);
    expect(flushBoundMs({ SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '0' }, 5000)).toBe(5000);
    expect(flushBoundMs({ SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '1.5' }, 5000)).toBe(5000);
    // Larger than a Node timer holds (it would fire at once): refused, like any other out-of-range value.
    expect(flushBoundMs({ SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '2147483648' }, 2000)).toBe(2000);
    expect(flushBoundMs({ SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '1e308' }, 2000)).toBe(2000);
    expect(flushBoundMs({ SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '2147483647' }, 2000)).toBe(2147483647);
  });
});
