/**
 * The environment `proxy --agent-telemetry` gives the agent
 * (`agentTelemetryEnv`): the agent's own, every supported agent's telemetry
 * pointed at the loopback receiver with content logging off, and the
 * variables that would send it elsewhere removed. Pure.
 */
import { describe, expect, it } from 'vitest';
import { agentTelemetryEnv } from '../../src/proxy/agent-telemetry-env.js';

const ORIGIN = 'http://127.0.0.1:40123';
const TOKEN = 'x-subagent-otel-token=abc';

describe('agentTelemetryEnv', () => {
  it("keeps the agent's own variables and TRACEPARENT, and leaves the given object alone", () => {
    const given = {
      PATH: '/bin',
      ANTHROPIC_API_KEY: 'k',
      TRACEPARENT: '00-aa-bb-01',
      OTEL_EXPORTER_OTLP_HEADERS: 'a=b',
    };
    const env = agentTelemetryEnv(given, ORIGIN, TOKEN);
    expect(env).toMatchObject({ PATH: '/bin', ANTHROPIC_API_KEY: 'k', TRACEPARENT: '00-aa-bb-01' });
    expect(given).toEqual({
      PATH: '/bin',
      ANTHROPIC_API_KEY: 'k',
      TRACEPARENT: '00-aa-bb-01',
      OTEL_EXPORTER_OTLP_HEADERS: 'a=b',
    });
  });

  it('points Gemini CLI, Claude Code and the OpenTelemetry SDKs at the receiver with its token, over OTLP/HTTP JSON', () => {
    const env = agentTelemetryEnv({ OTEL_EXPORTER_OTLP_HEADERS: 'authorization=user-secret' }, ORIGIN, TOKEN);
    expect(env).toMatchObject({
      GEMINI_TELEMETRY_ENABLED: 'true',
      GEMINI_TELEMETRY_TARGET: 'local',
      GEMINI_TELEMETRY_OTLP_ENDPOINT: ORIGIN,
      GEMINI_TELEMETRY_OTLP_PROTOCOL: 'http',
      CLAUDE_CODE_ENABLE_TELEMETRY: '1',
      CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_ENDPOINT: ORIGIN,
      OTEL_EXPORTER_OTLP_HEADERS: TOKEN,
    });
  });

  it('turns content logging off', () => {
    const env = agentTelemetryEnv({ OTEL_LOG_USER_PROMPTS: '1', GEMINI_TELEMETRY_LOG_PROMPTS: 'true' }, ORIGIN, TOKEN);
    expect([
      env.GEMINI_TELEMETRY_LOG_PROMPTS,
      env.OTEL_LOG_USER_PROMPTS,
      env.OTEL_LOG_TOOL_DETAILS,
      env.OTEL_LOG_TOOL_CONTENT,
      env.OTEL_LOG_RAW_API_BODIES,
    ]).toEqual(['false', '0', '0', '0', '0']);
  });

  it("removes what would send the agent's telemetry elsewhere or turn it off", () => {
    const elsewhere = {
      GEMINI_TELEMETRY_OUTFILE: '/tmp/t.json',
      GEMINI_TELEMETRY_USE_COLLECTOR: 'true',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces',
      OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'a=b',
      OTEL_SDK_DISABLED: 'true',
    };
    const env = agentTelemetryEnv(elsewhere, ORIGIN, TOKEN);
    for (const name of Object.keys(elsewhere)) expect(env).not.toHaveProperty(name);
  });
});
