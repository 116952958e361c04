/**
 * Maps the shared command-line telemetry flags onto `createTelemetry`
 * options, and installs where the OpenTelemetry diag logger writes for a
 * command. The CLI reads its own settings (flush bound, log file) through
 * the configuration table in `telemetry/config.ts`; everything else is read
 * by `createTelemetry` from the environment handed on.
 *
 * @module subagent-otel/cli/telemetry-options
 */
import { appendFileSync } from 'node:fs';
import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { setGlobalErrorHandler } from '@opentelemetry/core';
import { readSetting, SETTINGS } from '../telemetry/config.js';
import { defaultOutboxDir } from '../telemetry/outbox/outboxes.js';
import { OnceReporter } from '../telemetry/report-once.js';
import type { TelemetryOptions } from '../telemetry/setup.js';
import type { TelemetryFlags } from './options.js';
import { errorMessage } from '../wire/error-text.js';

/** Environment variable naming a file for the proxy's own diagnostics (it never writes to stderr). */
export const ENV_LOG_FILE = SETTINGS.logFile.env;

/**
 * Environment variable naming the listen address of the Prometheus endpoint
 * (CLI: `--prometheus-host`). Unset or blank: `127.0.0.1`, loopback only.
 */
export const ENV_PROMETHEUS_HOST = SETTINGS.prometheusHost.env;

/** Environment variable bounding the final telemetry flush of every command, in ms. */
export const ENV_SHUTDOWN_TIMEOUT_MS = SETTINGS.shutdownTimeoutMs.env;

const reports = new OnceReporter();

/**
 * The final flush bound of a command: `SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS`
 * when it is an integer within 1..2^31-1 (what a timer holds), else the
 * command's `fallback` (a value out of range is reported once).
 */
export function flushBoundMs(env: NodeJS.ProcessEnv, fallback: number): number {
  return readSetting({ ...SETTINGS.shutdownTimeoutMs, default: fallback, defaultText: String(fallback) }, env, reports);
}

/**
 * `createTelemetry` options for a command's flags; flags override the
 * environment, which is left for `createTelemetry` to read from the returned
 * `env` (`SUBAGENT_OTEL_PROMETHEUS_HOST` included). The outbox is on, in
 * the user's state directory, unless `SUBAGENT_OTEL_OUTBOX` names another
 * directory or says `off` (decision 0100). Never throws; never mutates
 * `flags` or `env`.
 */
export function telemetryOptions(flags: TelemetryFlags, env: NodeJS.ProcessEnv): TelemetryOptions {
  const prometheusHost = flags.prometheusHost;
  const content = {
    ...(flags.captureContent === false ? { capture: false } : {}),
    ...(flags.maxContentLength !== undefined ? { maxLength: flags.maxContentLength } : {}),
  };
  const outbox = readSetting(SETTINGS.outbox, env, reports);
  return {
    env,
    outbox: outbox ?? defaultOutboxDir(env),
    ...(flags.out !== undefined ? { out: flags.out } : {}),
    ...(flags.prometheusPort !== undefined ? { prometheusPort: flags.prometheusPort } : {}),
    ...(prometheusHost !== undefined ? { prometheusHost } : {}),
    ...(Object.keys(content).length > 0 ? { content } : {}),
  };
}

function lineLogger(write: (line: string) => void): DiagLogger {
  const at =
    (level: string) =>
    (message: string, ...args: unknown[]) => {
      const extra = args.length > 0 ? ` ${args.map(errorMessage).join(' ')}` : '';
      write(`${new Date().toISOString()} ${level} ${message}${extra}\n`);
    };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), verbose: at('verbose') };
}

/**
 * Routes diag messages for a command. `stderr` for commands that own their
 * terminal (demo, replay); for the proxy, only to the file named by
 * `SUBAGENT_OTEL_LOG_FILE` (its stderr belongs to the child), else nowhere.
 */
export function installDiagnostics(
  target: 'stderr' | 'proxy',
  env: NodeJS.ProcessEnv,
  stderr: NodeJS.WritableStream = process.stderr,
): void {
  // The SDK reports every failed export batch through its global error handler; our exporters
  // already count drops and say so once per kind, so the SDK's own reports are said once per message.
  const seen = new Set<string>();
  setGlobalErrorHandler((error) => {
    const message = errorMessage(error);
    if (seen.has(message) || seen.size >= 64) return;
    seen.add(message);
    diag.warn(`subagent-otel: OpenTelemetry SDK: ${message} (further reports of this error are not repeated)`);
  });
  if (target === 'stderr') {
    diag.setLogger(
      lineLogger((line) => stderr.write(`subagent-otel: ${line.replace(/^\S+ /, '')}`)),
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
    return;
  }
  const file = readSetting(SETTINGS.logFile, env, reports);
  if (file === undefined) return;
  diag.setLogger(
    lineLogger((line) => {
      try {
        appendFileSync(file, line);
      } catch {
        // An unwritable log file must not disturb the proxied agent; diagnostics are then lost by choice.
      }
    }),
    { logLevel: DiagLogLevel.INFO, suppressOverrideMessage: true },
  );
}

/** Longest single backpressure wait before the exporters are deemed unhealthy. */
export const BACKPRESSURE_WAIT_MS = 10_000;

/**
 * Backpressure on a command's telemetry (replay, demo): a wait that resolves
 * when every span handed to the exporters so far was taken (`forceFlush` of
 * the tracer provider: the file writer wrote its lines, the batch processor
 * exported its queue). A healthy file or collector thus never sees more than
 * one wait's worth of spans queued, so none is dropped. A wait that exceeds
 * `waitMs` (a hanging collector) marks the exporters unhealthy: later waits
 * return at once, and what they cannot take is dropped and counted as
 * usual. Never rejects.
 */
export function exportBackpressure(
  provider: { forceFlush(): Promise<void> },
  waitMs = BACKPRESSURE_WAIT_MS,
): () => Promise<void> {
  let isHealthy = true;
  return async () => {
    if (!isHealthy) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), waitMs);
    });
    const flushed = provider.forceFlush().then(
      () => false,
      () => false, // a failed export was counted as dropped by the exporter wrapper
    );
    try {
      if (await Promise.race([flushed, timedOut])) isHealthy = false;
    } finally {
      clearTimeout(timer);
    }
  };
}
