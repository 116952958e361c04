/**
 * The one configuration table of the project's own settings: for each, the
 * `createTelemetry` option, the command-line flag, the environment variable,
 * the default, the parser and its range. The library (`setup.ts`) and the CLI
 * (`cli/telemetry-options.ts`) read these settings only through this table,
 * and README's option table is tested against it.
 *
 * A second table, `OTLP_EXPORTER_SETTINGS`, holds the standard OTLP exporter
 * variables (headers, compression, timeout, certificates, insecure), each
 * with its per-signal form, with the OpenTelemetry specification's defaults:
 * the exporters are built with every one of them set (decision 0072), so no
 * OpenTelemetry package reads an environment of its own.
 *
 * The module imports nothing at run time (types only): the command line
 * parses its flags with it before anything else is loaded, and the proxy
 * spawns its agent right after that (decision 0039).
 *
 * @module subagent-otel/telemetry/config
 */
import type { OnceReporter } from './report-once.js';

/** An environment as `process.env` shapes it. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** Metric temporality preference (`OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`). */
export type TemporalityPreference = 'delta' | 'cumulative' | 'lowmemory';

/** Longest delay a Node timer honours (2^31 - 1 ms); a larger one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** One row of the configuration table. */
export interface Setting<T> {
  /** `createTelemetry` option (dotted for nested options), when there is one. */
  readonly option?: string;
  /** Command-line flag, when there is one. */
  readonly flag?: string;
  /** Environment variable. */
  readonly env: string;
  /** A more specific variable read first with the same parser, when set (as the SDK reads span limits). */
  readonly precededBy?: string;
  /** Value when the variable is unset, blank or invalid. */
  readonly default: T;
  /** The default as README's option table states it. */
  readonly defaultText: string;
  /** Accepted values, in words (for messages and docs). */
  readonly range: string;
  /** Parses a non-blank raw value; `undefined` when it is outside the range. Never throws. */
  parse(raw: string): T | undefined;
  /** Whether the value is a secret (headers): a warning about it never quotes it. */
  readonly secret?: boolean;
}

/**
 * Reads the capture switch.
 * @returns `true` for unset, empty, `true`, `1`, `on`, `yes`, `SPAN_ONLY`,
 *   `SPAN_AND_EVENT`; `false` for `false`, `0`, `off`, `no`, `none`,
 *   `NO_CONTENT`, `EVENT_ONLY` (this project emits no events, so content meant
 *   only for events stays out of spans); `undefined` for anything else.
 *   Case-insensitive, surrounding blanks ignored.
 */
export function parseCaptureSetting(raw: string | undefined): boolean | undefined {
  const value = (raw ?? '').trim().toLowerCase();
  switch (value) {
    case '':
    case 'true':
    case '1':
    case 'on':
    case 'yes':
    case 'span_only':
    case 'span_and_event':
      return true;
    case 'false':
    case '0':
    case 'off':
    case 'no':
    case 'none':
    case 'no_content':
    case 'event_only':
      return false;
    default:
      return undefined;
  }
}

/**
 * Reads a length limit.
 * @returns the limit for a decimal integer >= 1 (blanks around it ignored);
 *   `undefined` for unset, empty, or anything else.
 */
export function parseLengthLimit(raw: string | undefined): number | undefined {
  const value = (raw ?? '').trim();
  if (!/^\d+$/.test(value)) return undefined;
  const limit = Number(value);
  return Number.isSafeInteger(limit) && limit >= 1 ? limit : undefined;
}

/** Parses a decimal integer within `min..max` (blanks around it ignored). */
export function integerIn(min: number, max: number): (raw: string) => number | undefined {
  return (raw) => {
    const text = raw.trim();
    if (!/^\d+$/.test(text)) return undefined;
    const value = Number(text);
    return Number.isSafeInteger(value) && value >= min && value <= max ? value : undefined;
  };
}

/** Parses any non-blank text, trimmed. */
function text(raw: string): string | undefined {
  const value = raw.trim();
  return value === '' ? undefined : value;
}

/**
 * Which GenAI names are emitted. `latest` (the default): the names of
 * `semantic-conventions-genai` v0.1.0 (decision 0121). `previous`: the names
 * this project emitted before (core semantic conventions v1.41 plus
 * `gen_ai.invoke_agent.duration` for every run), kept behind
 * `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_previous` for one release
 * (decisions 0070, 0095, 0121).
 */
export type SemconvStability = 'previous' | 'latest';

/** The `OTEL_SEMCONV_STABILITY_OPT_IN` entry that keeps the previous GenAI names for one release (decision 0121). */
export const SEMCONV_OPT_IN_GEN_AI_PREVIOUS = 'gen_ai_previous' as const;
/**
 * The entry that selected the latest GenAI names while they were opt-in
 * (decision 0070). Still accepted; it asks for what is now the default.
 */
export const SEMCONV_OPT_IN_GEN_AI_LATEST = 'gen_ai_latest_experimental' as const;

/**
 * Reads `OTEL_SEMCONV_STABILITY_OPT_IN`, a comma-separated list of
 * category values (blanks around entries ignored, case-sensitive as the
 * conventions spell them). Pure, never throws.
 * @returns `previous` when the list contains `gen_ai_previous` (also when it
 *   holds `gen_ai_latest_experimental` too: that entry may be set for other
 *   instrumentations, `gen_ai_previous` only for this one), else `latest`
 *   (entries of other categories, such as `http`, are not ours).
 */
export function parseSemconvStability(raw: string | undefined): SemconvStability {
  const entries = (raw ?? '').split(',').map((entry) => entry.trim());
  return entries.includes(SEMCONV_OPT_IN_GEN_AI_PREVIOUS) ? 'previous' : 'latest';
}

/** Parses a metric temporality preference, case-insensitively. */
function temporality(raw: string): TemporalityPreference | undefined {
  const value = raw.trim().toLowerCase();
  return value === 'delta' || value === 'cumulative' || value === 'lowmemory' ? value : undefined;
}

/** The OTLP transport protocols of the OpenTelemetry specification. */
export type OtlpProtocol = 'grpc' | 'http/protobuf' | 'http/json';

/** Parses an OTLP protocol name. */
function protocol(raw: string): OtlpProtocol | undefined {
  const value = raw.trim().toLowerCase();
  return value === 'grpc' || value === 'http/protobuf' || value === 'http/json' ? value : undefined;
}

/**
 * Parses a directory-or-off setting (the proxy's code cache, the outbox):
 * `false` (off) for `off`, `false`, `0`, `no` (any case); else the
 * directory, trimmed; `undefined` for blanks.
 */
function codeCacheSetting(raw: string): string | false | undefined {
  return /^(off|false|0|no)$/i.test(raw.trim()) ? false : text(raw);
}

/** The rows of the table. */
export interface SettingsTable {
  readonly out: Setting<string>;
  readonly prometheusPort: Setting<number>;
  readonly prometheusHost: Setting<string>;
  readonly captureContent: Setting<boolean>;
  readonly maxContentLength: Setting<number | undefined>;
  readonly shutdownTimeoutMs: Setting<number>;
  readonly logFile: Setting<string | undefined>;
  readonly outbox: Setting<string | false | undefined>;
  readonly outboxMaxBytes: Setting<number>;
  readonly metricsTemporality: Setting<TemporalityPreference>;
  readonly metricExportIntervalMs: Setting<number>;
  readonly metricExportTimeoutMs: Setting<number>;
  readonly otlpProtocol: Setting<OtlpProtocol>;
  readonly codeCache: Setting<string | false | undefined>;
  readonly semconvStability: Setting<SemconvStability>;
  readonly teamAttributes: Setting<boolean>;
}

/** The table. Keys are the settings' names in code. */
export const SETTINGS: SettingsTable = {
  out: {
    option: 'out',
    flag: '--out',
    env: 'SUBAGENT_OTEL_OUT',
    default: './subagent-otel-out',
    defaultText: '`./subagent-otel-out` when no OTLP endpoint is set',
    range: 'a directory path',
    parse: text,
  },
  prometheusPort: {
    option: 'prometheusPort',
    flag: '--prometheus-port',
    env: 'SUBAGENT_OTEL_PROMETHEUS_PORT',
    default: 0,
    defaultText: 'off (suggested 9464)',
    range: 'an integer 0..65535 (0 is off)',
    parse: integerIn(0, 65535),
  },
  prometheusHost: {
    option: 'prometheusHost',
    flag: '--prometheus-host',
    env: 'SUBAGENT_OTEL_PROMETHEUS_HOST',
    default: '127.0.0.1',
    defaultText: '`127.0.0.1`',
    range: 'a host name or address',
    parse: text,
  },
  captureContent: {
    option: 'content.capture',
    flag: '--no-content',
    env: 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT',
    default: true,
    defaultText: 'capture on',
    range: 'true, false, 1, 0, on, off, yes, no, none, NO_CONTENT, SPAN_ONLY, EVENT_ONLY, SPAN_AND_EVENT',
    parse: (raw: string) => parseCaptureSetting(raw),
  },
  maxContentLength: {
    option: 'content.maxLength',
    flag: '--max-content-length',
    env: 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT',
    precededBy: 'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT',
    default: undefined,
    defaultText: 'no cap',
    range: 'an integer 0..2^53-1 (0: no content)',
    // 0 is accepted and means no content at all (fails closed, as the environment variable does).
    parse: (raw: string) => (raw.trim() === '0' ? 0 : parseLengthLimit(raw)),
  },
  shutdownTimeoutMs: {
    option: 'shutdown(timeoutMs)',
    env: 'SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS',
    default: 5000,
    defaultText: '`2000` proxy, `5000` demo, `15000` replay',
    range: `an integer 1..${MAX_TIMER_MS} (ms)`,
    parse: integerIn(1, MAX_TIMER_MS),
  },
  outbox: {
    option: 'outbox',
    env: 'SUBAGENT_OTEL_OUTBOX',
    default: undefined,
    defaultText: '`$XDG_STATE_HOME/subagent-otel/outbox` (CLI)',
    range: 'a directory path, or off',
    parse: codeCacheSetting,
  },
  outboxMaxBytes: {
    env: 'SUBAGENT_OTEL_OUTBOX_MAX_BYTES',
    default: 64 * 1024 * 1024,
    defaultText: '`67108864` (64 MiB) per destination',
    range: 'an integer 1024..2^53-1 (bytes)',
    parse: integerIn(1024, Number.MAX_SAFE_INTEGER),
  },
  logFile: {
    env: 'SUBAGENT_OTEL_LOG_FILE',
    default: undefined,
    defaultText: 'off',
    range: 'a file path',
    parse: text,
  },
  metricsTemporality: {
    env: 'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE',
    default: 'delta',
    defaultText: 'delta',
    range: 'delta, cumulative, lowmemory',
    parse: temporality,
  },
  metricExportIntervalMs: {
    env: 'OTEL_METRIC_EXPORT_INTERVAL',
    default: 60_000,
    defaultText: '60000',
    range: `an integer 1..${MAX_TIMER_MS} (ms)`,
    parse: integerIn(1, MAX_TIMER_MS),
  },
  metricExportTimeoutMs: {
    env: 'OTEL_METRIC_EXPORT_TIMEOUT',
    default: 30_000,
    defaultText: '30000',
    range: `an integer 1..${MAX_TIMER_MS} (ms)`,
    parse: integerIn(1, MAX_TIMER_MS),
  },
  otlpProtocol: {
    env: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    default: 'http/protobuf',
    defaultText: '`http/protobuf`',
    range: 'grpc, http/protobuf, http/json',
    parse: protocol,
  },
  codeCache: {
    env: 'SUBAGENT_OTEL_CODE_CACHE',
    default: undefined,
    defaultText: 'on, in `$XDG_CACHE_HOME/subagent-otel` (else `~/.cache/subagent-otel`)',
    range: '`off`, or a directory path',
    parse: codeCacheSetting,
  },
  semconvStability: {
    env: 'OTEL_SEMCONV_STABILITY_OPT_IN',
    default: 'latest',
    defaultText: 'the GenAI names of semantic-conventions-genai v0.1.0',
    range:
      'a comma-separated list; `gen_ai_previous` keeps the previous GenAI names for one release (`gen_ai_latest_experimental` is accepted and changes nothing)',
    parse: parseSemconvStability,
  },
  teamAttributes: {
    option: 'teamAttributes',
    env: 'SUBAGENT_OTEL_TEAM_ATTRIBUTES',
    default: false,
    defaultText: 'off',
    range: 'true, false, 1, 0, on, off, yes, no',
    parse: (raw: string) =>
      /^(true|1|on|yes)$/i.test(raw.trim()) ? true : /^(false|0|off|no)$/i.test(raw.trim()) ? false : undefined,
  },
};

/**
 * Reads one setting from `env`: its default when unset or blank; the parsed
 * value when in range; else the default, with a warning reported once per
 * variable and value through `reports`. Never throws.
 */
export function readSetting<T>(
  setting: Setting<T>,
  env: Environment,
  reports: OnceReporter,
  variable: string = setting.env,
): T {
  const raw = env[variable];
  if (raw === undefined || raw.trim() === '') return setting.default;
  const value = setting.parse(raw);
  if (value !== undefined) return value;
  const shown = setting.secret === true ? `${variable} (value not shown)` : `${variable}=${JSON.stringify(raw)}`;
  reports.report(
    'warn',
    setting.secret === true ? `${variable}:secret` : `${variable}:${raw}`,
    `${shown} is not ${setting.range}; using ${setting.defaultText.replace(/`/g, '')}`,
  );
  return setting.default;
}

/** The signals of the per-signal OTLP variables. */
export type OtlpSignalName = 'TRACES' | 'METRICS';

/** One OTLP exporter setting: `env` is the generic variable `OTEL_EXPORTER_OTLP_<suffix>`. */
export interface OtlpSetting<T> extends Setting<T> {
  /** What follows `OTEL_EXPORTER_OTLP_` (and `OTEL_EXPORTER_OTLP_<SIGNAL>_`) in the variable names. */
  readonly suffix: string;
}

/**
 * Parses an OTLP headers value: comma-separated `key=value` pairs (blanks
 * around keys and values ignored, both percent-decoded, pairs with an empty
 * value left out, as the OpenTelemetry packages read them).
 * @returns the headers; `undefined` when an entry has no `=`, no key or bad
 *   percent-encoding. Never throws.
 */
export function parseOtlpHeaders(raw: string): Readonly<Record<string, string>> | undefined {
  const headers: Record<string, string> = {};
  for (const entry of raw.split(',')) {
    if (entry.trim() === '') continue;
    const at = entry.indexOf('=');
    if (at <= 0 || entry.slice(0, at).trim() === '') return undefined;
    try {
      const key = decodeURIComponent(entry.slice(0, at).trim());
      const value = decodeURIComponent(entry.slice(at + 1).trim());
      if (value !== '') headers[key] = value;
    } catch {
      // decodeURIComponent throws URIError for a malformed percent sequence.
      return undefined;
    }
  }
  return headers;
}

/** The rows of the OTLP exporter table. */
export interface OtlpSettingsTable {
  readonly headers: OtlpSetting<Readonly<Record<string, string>>>;
  readonly compression: OtlpSetting<'gzip' | 'none'>;
  readonly timeoutMs: OtlpSetting<number>;
  readonly certificate: OtlpSetting<string | undefined>;
  readonly clientKey: OtlpSetting<string | undefined>;
  readonly clientCertificate: OtlpSetting<string | undefined>;
  readonly insecure: OtlpSetting<boolean>;
}

/**
 * The standard OTLP exporter variables (OpenTelemetry OTLP exporter
 * specification), with its defaults. The endpoints are read by the plan
 * (`setup.ts`), which also decides whether OTLP is used at all.
 */
export const OTLP_EXPORTER_SETTINGS: OtlpSettingsTable = {
  headers: {
    suffix: 'HEADERS',
    env: 'OTEL_EXPORTER_OTLP_HEADERS',
    default: {},
    defaultText: 'no headers',
    range: 'a comma-separated list of key=value pairs with percent-encoded values',
    parse: parseOtlpHeaders,
    secret: true,
  },
  compression: {
    suffix: 'COMPRESSION',
    env: 'OTEL_EXPORTER_OTLP_COMPRESSION',
    default: 'none',
    defaultText: 'none',
    range: 'gzip or none',
    parse: (raw) => {
      const value = raw.trim().toLowerCase();
      return value === 'gzip' || value === 'none' ? value : undefined;
    },
  },
  timeoutMs: {
    suffix: 'TIMEOUT',
    env: 'OTEL_EXPORTER_OTLP_TIMEOUT',
    default: 10_000,
    defaultText: '10000',
    range: `an integer 1..${MAX_TIMER_MS} (ms)`,
    parse: integerIn(1, MAX_TIMER_MS),
  },
  certificate: {
    suffix: 'CERTIFICATE',
    env: 'OTEL_EXPORTER_OTLP_CERTIFICATE',
    default: undefined,
    defaultText: 'the system roots',
    range: 'a file path (PEM)',
    parse: text,
  },
  clientKey: {
    suffix: 'CLIENT_KEY',
    env: 'OTEL_EXPORTER_OTLP_CLIENT_KEY',
    default: undefined,
    defaultText: 'no client key',
    range: 'a file path (PEM)',
    parse: text,
  },
  clientCertificate: {
    suffix: 'CLIENT_CERTIFICATE',
    env: 'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE',
    default: undefined,
    defaultText: 'no client certificate',
    range: 'a file path (PEM)',
    parse: text,
  },
  insecure: {
    suffix: 'INSECURE',
    env: 'OTEL_EXPORTER_OTLP_INSECURE',
    default: false,
    defaultText: 'false',
    range: 'true or false',
    parse: (raw) => {
      const value = raw.trim().toLowerCase();
      return value === 'true' ? true : value === 'false' ? false : undefined;
    },
  },
};

/**
 * Reads one OTLP exporter setting for `signal` with the specification's
 * precedence: `OTEL_EXPORTER_OTLP_<SIGNAL>_<suffix>` when it is set (not
 * blank), else `OTEL_EXPORTER_OTLP_<suffix>`; the variable that is set
 * decides alone (headers are not merged across the two). Then as
 * `readSetting`. Never throws.
 */
export function readOtlpSetting<T>(
  setting: OtlpSetting<T>,
  signal: OtlpSignalName,
  env: Environment,
  reports: OnceReporter,
): T {
  const specific = `OTEL_EXPORTER_OTLP_${signal}_${setting.suffix}`;
  const raw = env[specific];
  return readSetting(setting, env, reports, raw !== undefined && raw.trim() !== '' ? specific : setting.env);
}

/**
 * Checks an option value against a setting's range.
 * @returns `value` when it is `undefined` or `parse(String(value))` gives it
 *   back; else `undefined`, with a warning reported once. Never throws.
 */
export function checkOption<T extends number>(
  setting: Setting<T> | Setting<T | undefined>,
  value: T | undefined,
  reports: OnceReporter,
): T | undefined {
  if (value === undefined) return undefined;
  if (setting.parse(String(value)) === value) return value;
  reports.report(
    'warn',
    `option:${setting.option ?? setting.env}:${value}`,
    `${setting.option ?? setting.env} ${String(value)} is not ${setting.range}; ignored`,
  );
  return undefined;
}
