/**
 * What the commands' option parsers share: the telemetry options (their
 * `parseArgs` configuration, their help and their normalization), the flag
 * value checks (ports, hosts, seconds, protocols), and one strict
 * `parseArgs` call whose errors become `UsageError`s pointing at the
 * command's help. Owns no command: each command's own options are parsed in
 * its module under `commands/`.
 *
 * @module subagent-otel/cli/options
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';
import { SETTINGS, type Setting } from '../telemetry/config.js';

/** Options every telemetry-emitting command takes. */
export interface TelemetryFlags {
  /** `--out <dir>`: also write OTLP-JSON lines files there. */
  readonly out?: string;
  /** `--prometheus-port <port>`: serve `/metrics` on 127.0.0.1 (or `--prometheus-host`). */
  readonly prometheusPort?: number;
  /**
   * `--prometheus-host <host>`: listen address of the `/metrics` endpoint.
   * Absent when not given; the environment (`SUBAGENT_OTEL_PROMETHEUS_HOST`)
   * and the default (`127.0.0.1`) are applied in `telemetry-options.ts`.
   */
  readonly prometheusHost?: string;
  /** `--no-content`: never record output text. */
  readonly captureContent?: false;
  /** `--max-content-length <n>`: cap on recorded output JSON. */
  readonly maxContentLength?: number;
  /** `--agent-name <name>`: `gen_ai.agent.name` of the runs. */
  readonly agentName?: string;
}

/** The protocol spoken on stdio: `auto` decides from the first frames. */
export type Protocol = 'sdk' | 'acp' | 'auto';

/** The `parseArgs` options every telemetry-emitting command takes (and `--help`, `-h`). */
export const telemetryOptions = {
  out: { type: 'string' },
  'prometheus-port': { type: 'string' },
  'prometheus-host': { type: 'string' },
  'no-content': { type: 'boolean' },
  'max-content-length': { type: 'string' },
  'agent-name': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** The help of the telemetry options and the standard environment, shared by the pages of the commands that take them. */
export const TELEMETRY_HELP = `Telemetry options:
  --out <dir>                 also write traces.jsonl and metrics.jsonl (OTLP JSON lines) to <dir>,
                              even when an OTLP endpoint is configured
                              (default without an endpoint: $SUBAGENT_OTEL_OUT or ./subagent-otel-out)
  --prometheus-port <port>    serve Prometheus metrics on http://<host>:<port>/metrics
                              (env SUBAGENT_OTEL_PROMETHEUS_PORT; suggested 9464)
  --prometheus-host <host>    listen address of that endpoint (env SUBAGENT_OTEL_PROMETHEUS_HOST;
                              default 127.0.0.1); e.g. the Docker bridge address for a container
  --no-content                record no output text (hash and length only); same as
                              OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false
  --max-content-length <n>    cap recorded output JSON at <n> characters, 0 for none (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT)
  --agent-name <name>         gen_ai.agent.name of the runs (default: the provider, or the protocol)

Environment (OpenTelemetry standard): OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
  OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://localhost:4318), OTEL_EXPORTER_OTLP_PROTOCOL
  (grpc, http/protobuf (default), http/json; per signal with _TRACES_/_METRICS_),
  OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER.`;

/** A flag's value parsed by its row of the configuration table; a value out of its range is a usage error. */
function settingFlag<T>(setting: Setting<T>, value: string | undefined): T | undefined {
  if (value === undefined) return undefined;
  const parsed = value.trim() === '' ? undefined : setting.parse(value);
  if (parsed === undefined)
    throw new UsageError(`${setting.flag ?? setting.env} takes ${setting.range}, got '${value}'`);
  return parsed;
}

/** A host flag's value: a name or address without spaces; anything else is a usage error. */
export function hostOf(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === '' || /\s/.test(value))
    throw new UsageError(`${flag} takes a host name or IP address such as 127.0.0.1, got '${value}'`);
  return value;
}

/** A `--idle`/`--interval` value in seconds, as milliseconds; a value that is no number in `min..max` is a usage error. */
export function secondsFlag(flag: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value.trim());
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds < min || seconds > max) {
    throw new UsageError(`${flag} takes seconds from ${min} to ${max}, got '${value}'`);
  }
  return Math.round(seconds * 1000);
}

/** A `--port` value: an integer 1..65535. */
export function portOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value.trim());
  if (value.trim() === '' || !Number.isInteger(port) || port < 1 || port > 65_535)
    throw new UsageError(`--port takes a port from 1 to 65535, got '${value}'`);
  return port;
}

function agentNameOf(value: string): string {
  if (value.trim() === '') throw new UsageError(`--agent-name takes a non-empty name such as 'coder', got '${value}'`);
  return value;
}

/** A `--protocol` value; absent: `auto`; anything but sdk, acp or auto is a usage error. */
export function protocolOf(value: string | undefined): Protocol {
  if (value === undefined) return 'auto';
  if (value === 'sdk' || value === 'acp' || value === 'auto') return value;
  throw new UsageError(`--protocol takes sdk, acp or auto, got '${value}'`);
}

/** The telemetry options among parsed `values`, checked and normalized; a value out of range is a usage error. */
export function telemetryFlags(values: Values): TelemetryFlags {
  const prometheusPort = settingFlag(SETTINGS.prometheusPort, values['prometheus-port'] as string | undefined);
  const prometheusHost = hostOf('--prometheus-host', values['prometheus-host'] as string | undefined);
  const maxContentLength = settingFlag(SETTINGS.maxContentLength, values['max-content-length'] as string | undefined);
  return {
    ...(typeof values.out === 'string' ? { out: values.out } : {}),
    ...(prometheusPort !== undefined ? { prometheusPort } : {}),
    ...(prometheusHost !== undefined ? { prometheusHost } : {}),
    ...(values['no-content'] === true ? { captureContent: false as const } : {}),
    ...(maxContentLength !== undefined ? { maxContentLength } : {}),
    ...(typeof values['agent-name'] === 'string' ? { agentName: agentNameOf(values['agent-name']) } : {}),
  };
}

/** Option values as `parseArgs` returns them. */
export type Values = Record<string, string | boolean | undefined>;

/**
 * Parses a command's arguments strictly with `options`.
 *
 * @param command the command's name, for the help its errors point to.
 * @throws UsageError for an unknown option or a missing value, naming it and
 *   `subagent-otel help <command>`.
 */
export function parseOptions(
  command: string,
  argv: readonly string[],
  options: ParseArgsConfig['options'],
  allowPositionals: boolean,
): { values: Values; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options, strict: true, allowPositionals });
    return { values: values as Values, positionals };
  } catch (err) {
    // parseArgs throws TypeError with code ERR_PARSE_ARGS_* for unknown options and missing values.
    const message = err instanceof Error ? err.message : String(err);
    throw new UsageError(
      `${message.replace(/\. To specify a positional argument.*$/s, '')} (see 'subagent-otel help ${command}')`,
    );
  }
}
