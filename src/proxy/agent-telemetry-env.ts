/**
 * The environment `proxy --agent-telemetry` gives the agent: the agent's
 * own, plus each supported agent's documented telemetry switches pointed at
 * the proxy's loopback OTLP/HTTP JSON receiver, content logging off. One set
 * for every agent (the proxy does not know which agent a command is; each
 * reads only its own names, and the `OTEL_*` ones are the OpenTelemetry SDKs'
 * standard variables):
 *
 * - Gemini CLI: `GEMINI_TELEMETRY_ENABLED`, `_TARGET=local`,
 *   `_OTLP_ENDPOINT`, `_OTLP_PROTOCOL=http` (its OTLP/HTTP exporters send
 *   JSON), `_LOG_PROMPTS=false`; `GEMINI_TELEMETRY_OUTFILE` removed (it
 *   would override the endpoint).
 * - Claude Code: `CLAUDE_CODE_ENABLE_TELEMETRY=1`, session tracing
 *   (`CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1`), `OTEL_{TRACES,METRICS,LOGS}_EXPORTER=otlp`,
 *   `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`, `OTEL_LOG_USER_PROMPTS`,
 *   `OTEL_LOG_TOOL_DETAILS`, `OTEL_LOG_TOOL_CONTENT`, `OTEL_LOG_RAW_API_BODIES` off.
 * - Both: `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS` set to
 *   the receiver's token header (the user's headers are for their collector,
 *   and the receiver refuses requests without the token), short batch and
 *   export intervals (so records come soon after the turn), per-signal
 *   endpoint, protocol and header overrides removed (they name the user's
 *   collector, not ours).
 * - Codex: nothing. codex-acp 2.6 reads no telemetry setting from its
 *   environment (its `[otel]` section lives in the user's `config.toml`).
 *
 * `TRACEPARENT` is left as the proxy got it: the agent process outlives the
 * runs it serves, so no one run's context is the process's; its spans are
 * re-parented under their run when forwarded instead.
 *
 * Pure: returns a new object, never touches `process.env`.
 *
 * @module subagent-otel/proxy/agent-telemetry-env
 */

/** Variables removed from the agent's environment: they would send its telemetry elsewhere. */
export const AGENT_TELEMETRY_REMOVED = [
  'GEMINI_TELEMETRY_OUTFILE',
  'GEMINI_TELEMETRY_USE_COLLECTOR',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  'OTEL_EXPORTER_OTLP_LOGS_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL',
  'OTEL_EXPORTER_OTLP_LOGS_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_METRICS_HEADERS',
  'OTEL_EXPORTER_OTLP_LOGS_HEADERS',
  'OTEL_SDK_DISABLED',
] as const;

/**
 * The agent's environment with its telemetry pointed at `origin`
 * (`http://127.0.0.1:PORT`), sending `otlpHeaders` (the receiver's
 * `name=value` token header) with every export.
 */
export function agentTelemetryEnv(env: NodeJS.ProcessEnv, origin: string, otlpHeaders: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const name of AGENT_TELEMETRY_REMOVED) delete out[name];
  Object.assign(out, {
    // Gemini CLI
    GEMINI_TELEMETRY_ENABLED: 'true',
    GEMINI_TELEMETRY_TARGET: 'local',
    GEMINI_TELEMETRY_OTLP_ENDPOINT: origin,
    GEMINI_TELEMETRY_OTLP_PROTOCOL: 'http',
    GEMINI_TELEMETRY_LOG_PROMPTS: 'false',
    // Claude Code
    CLAUDE_CODE_ENABLE_TELEMETRY: '1',
    CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
    OTEL_LOG_USER_PROMPTS: '0',
    OTEL_LOG_TOOL_DETAILS: '0',
    OTEL_LOG_TOOL_CONTENT: '0',
    OTEL_LOG_RAW_API_BODIES: '0',
    OTEL_LOGS_EXPORT_INTERVAL: '500',
    // OpenTelemetry SDKs
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'otlp',
    OTEL_LOGS_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: origin,
    OTEL_EXPORTER_OTLP_HEADERS: otlpHeaders,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_BLRP_SCHEDULE_DELAY: '200',
    OTEL_METRIC_EXPORT_INTERVAL: '1000',
  });
  return out;
}
