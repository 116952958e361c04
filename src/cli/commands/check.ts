/**
 * `subagent-otel check`: shows where telemetry goes for the current
 * environment and flags (the same `createTelemetry` configuration `proxy`,
 * `replay` and `demo` build), then sends one test span and one test metric
 * through exactly that configuration and reports, per destination, delivery
 * or the exact failure. Owns presentation and the exit code; the
 * configuration itself is `telemetry/setup`'s, its static problems
 * `telemetry/config-problems`'.
 *
 * @module subagent-otel/cli/commands/check
 */
import { request } from 'node:http';
import {
  planTelemetry,
  createTelemetryFromPlan,
  type Telemetry,
  type TelemetryShutdownReport,
} from '../../telemetry/setup.js';
import { configurationProblems, deliversAnything } from '../../telemetry/config-problems.js';
import {
  INSTRUMENTATION_SCOPE_NAME,
  METRIC_SUBAGENT_CHECKS,
  SPAN_NAME_CHECK,
  UNIT_CHECKS,
} from '../../telemetry/semconv.js';
import type { CheckCommand } from './check-command.js';
import { flushBoundMs, installDiagnostics, telemetryOptions } from '../telemetry-options.js';
import { readSetting, SETTINGS } from '../../telemetry/config.js';
import { otlpExporterSettings } from '../../telemetry/otlp-exporters.js';
import {
  openDestinationOutbox,
  summarizeOutbox,
  type OutboxPlace,
  type OutboxSummary,
} from '../../telemetry/outbox/outboxes.js';
import { OnceReporter } from '../../telemetry/report-once.js';
import { hooksStatus, hooksStatusText, type HooksStatus } from '../../hooks/hooks-status.js';
import { errorMessage } from '../../wire/error-text.js';

export type { CheckCommand };

/** Bound on sending the test span and metric, in ms (`SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS`). */
export const DEFAULT_CHECK_FLUSH_MS = 5000;

/** The outcome for one destination. */
export interface CheckResult {
  /** The destination as `describeDestinations` names it (no credentials). */
  readonly destination: string;
  readonly ok: boolean;
  /** Why it failed, when it did. */
  readonly error?: string;
}

/** The `--json` document. */
export interface CheckReport {
  readonly destinations: readonly string[];
  readonly outDir?: string;
  readonly otlpHeaders: readonly string[];
  readonly content: { readonly capture: boolean; readonly maxLength?: number };
  readonly prometheus?: string;
  readonly serviceName: string;
  readonly problems: readonly string[];
  readonly results: readonly CheckResult[];
  /** The outbox: where, what waits per destination, and what `--deliver` delivered. Absent when the outbox is off. */
  readonly outbox?: {
    readonly dir: string;
    readonly maxBytes: number;
    readonly destinations: ReadonlyArray<OutboxSummary & { readonly configured: boolean }>;
    readonly delivered?: {
      readonly requests: number;
      readonly items: number;
      readonly runs: number;
      readonly refused: number;
    };
  };
  /** The agents' hooks (`setup`): absent when never set up. */
  readonly hooks?: HooksStatus;
  readonly ok: boolean;
}

/** Default bound of `check --deliver`, in ms (`SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS`). */
export const DEFAULT_DELIVER_MS = 60_000;

/** `GET url`: resolves with the body, or rejects with the error; bounded by `timeoutMs`. */
function httpGet(url: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(Buffer.concat(chunks).toString('utf8'))
          : reject(new Error(`HTTP ${String(res.statusCode)}`)),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Posts an empty OTLP/HTTP JSON export request (`{}`, which every receiver
 * accepts) to `url` with the configured headers, to name why the exporter
 * failed. @returns `undefined` when the receiver answered 2xx, else the error.
 */
function probeOtlpHttp(
  url: string,
  headers: Readonly<Record<string, string>>,
  timeoutMs: number,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    let req;
    try {
      req = request(
        url,
        { method: 'POST', timeout: timeoutMs, headers: { ...headers, 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          const status = res.statusCode ?? 0;
          resolve(
            status >= 200 && status < 300
              ? undefined
              : `the endpoint answered HTTP ${status}${res.statusMessage !== undefined ? ` ${res.statusMessage}` : ''}`,
          );
        },
      );
    } catch (error) {
      // request() throws synchronously for a URL scheme node:http cannot speak (e.g. https is another module).
      resolve(errorMessage(error));
      return;
    }
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error) => resolve(error.message));
    req.end('{}');
  });
}

/** The exporter kind of a destination line (`traces: OTLP/HTTP JSON …` → `otlp`), as the drop messages name it. */
function kindOf(destination: string): { signal: string; kind: string } | undefined {
  const match = /^(traces|metrics): (\S+)/.exec(destination);
  if (match === null) return undefined;
  const word = (match[2] ?? '').toLowerCase();
  const kind = word.startsWith('otlp') ? 'otlp' : word;
  return { signal: match[1] ?? '', kind };
}

/** Judges each push destination by the shutdown report: a drop or timeout of its signal and kind is its failure. */
function pushResults(destinations: readonly string[], report: TelemetryShutdownReport): CheckResult[] {
  const results: CheckResult[] = [];
  for (const destination of destinations) {
    const parsed = kindOf(destination);
    if (parsed === undefined || parsed.kind === 'none' || parsed.kind === 'prometheus') continue;
    const failure =
      report.errors.find((e) => e.startsWith(`${parsed.signal}: ${parsed.kind} `)) ??
      report.errors.find(
        (e) =>
          e.startsWith(`${parsed.signal}: shutdown did not finish`) ||
          e.startsWith(`${parsed.signal}: shutdown failed`),
      );
    results.push(
      failure !== undefined
        ? { destination, ok: false, error: failure.replace(/^\w+: /, '') }
        : { destination, ok: true },
    );
  }
  return results;
}

/**
 * OTLP headers as the exporters read them (`OTEL_EXPORTER_OTLP_HEADERS`, then
 * the per-signal variable over it): `key=value` pairs, comma separated,
 * percent-decoded. Used to probe a failed collector with what the exporter
 * sent, and to list header names (never values). Never throws.
 */
function otlpHeaders(env: NodeJS.ProcessEnv, signal: 'TRACES' | 'METRICS'): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const raw of [env['OTEL_EXPORTER_OTLP_HEADERS'], env[`OTEL_EXPORTER_OTLP_${signal}_HEADERS`]]) {
    for (const pair of (raw ?? '').split(',')) {
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      try {
        headers[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim());
      } catch {
        // URIError: a malformed escape; the exporter skips such a pair too.
      }
    }
  }
  return headers;
}

/** `service.name` as the resource detector reads it: `OTEL_SERVICE_NAME`, else from `OTEL_RESOURCE_ATTRIBUTES`. */
function serviceNameOf(env: NodeJS.ProcessEnv): string | undefined {
  const direct = env['OTEL_SERVICE_NAME']?.trim();
  if (direct !== undefined && direct !== '') return direct;
  for (const pair of (env['OTEL_RESOURCE_ATTRIBUTES'] ?? '').split(',')) {
    const [key, value] = pair.split('=');
    if (key?.trim() === 'service.name' && value !== undefined && value.trim() !== '') return value.trim();
  }
  return undefined;
}

async function prometheusResult(telemetry: Telemetry, timeoutMs: number): Promise<CheckResult | undefined> {
  if (telemetry.prometheus === undefined) return undefined;
  const destination = `metrics: Prometheus ${telemetry.prometheus.url}`;
  const url = await telemetry.prometheus.ready;
  if (url === undefined)
    return { destination, ok: false, error: 'the endpoint could not listen (see the message above)' };
  try {
    const body = await httpGet(url, timeoutMs);
    const name = `${METRIC_SUBAGENT_CHECKS.replace(/[^a-zA-Z0-9_:]/g, '_')}_total`;
    return body.includes(name)
      ? { destination, ok: true }
      : { destination, ok: false, error: `the scrape did not show ${name}` };
  } catch (error) {
    return { destination, ok: false, error: `scraping ${url} failed: ${errorMessage(error)}` };
  }
}

function contentLine(content: CheckReport['content']): string {
  if (!content.capture)
    return 'not captured (hash and length only; --no-content or OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false)';
  return content.maxLength !== undefined
    ? `captured, capped at ${content.maxLength} characters`
    : 'captured (no length cap; turn off with --no-content)';
}

const PROTOCOL_NAMES: Readonly<Record<string, string>> = {
  grpc: 'OTLP/gRPC',
  'http/protobuf': 'OTLP/HTTP protobuf',
  'http/json': 'OTLP/HTTP JSON',
};

/** The outbox part of the report, in words. Pure. */
function outboxText(report: CheckReport): string[] {
  const outbox = report.outbox;
  if (outbox === undefined)
    return ['Outbox: off (SUBAGENT_OTEL_OUTBOX=off): exports a destination does not take are dropped and counted'];
  const lines = [`Outbox: ${outbox.dir} (at most ${outbox.maxBytes} bytes per destination)`];
  if (outbox.delivered !== undefined) {
    lines.push(
      `  delivered now: ${outbox.delivered.runs} run(s) in ${outbox.delivered.requests} request(s) (${outbox.delivered.items} span(s) or metric batch(es)); refused for good: ${outbox.delivered.refused} request(s)`,
    );
  }
  const shown = outbox.destinations.filter(
    (d) => d.requests > 0 || d.state.lastError !== undefined || d.state.refused > 0 || d.state.droppedItems > 0,
  );
  if (shown.length === 0) lines.push('  nothing waits');
  for (const d of shown) {
    const where =
      d.destination !== undefined
        ? `${d.destination.signal}: ${PROTOCOL_NAMES[d.destination.protocol] ?? d.destination.protocol} ${d.destination.url}`
        : d.folder;
    const unit = d.destination?.signal === 'metrics' ? 'metric batch(es)' : 'span(s)';
    const waits =
      d.requests > 0
        ? `${d.requests} request(s) wait: ${d.items} ${unit}, ${d.runs} run(s), ${d.bytes} bytes, since ${new Date(d.since ?? 0).toISOString()}`
        : 'nothing waits';
    lines.push(
      `  ${where}: ${waits}${d.configured ? '' : ' (not a destination of this configuration: delivered by a command configured for it)'}`,
    );
    if (d.state.lastError !== undefined)
      lines.push(
        `    last error${d.state.lastErrorAt !== undefined ? ` (${new Date(d.state.lastErrorAt).toISOString()})` : ''}: ${d.state.lastError}`,
      );
    if (d.state.refused > 0)
      lines.push(
        `    refused for good so far: ${d.state.refused} request(s), ${d.state.refusedItems} ${unit} (not retried)`,
      );
    if (d.state.droppedItems > 0)
      lines.push(`    dropped to stay within the bound so far: ${d.state.droppedItems} ${unit}`);
  }
  if (outbox.delivered === undefined && shown.some((d) => d.requests > 0))
    lines.push('  deliver it now: subagent-otel check --deliver (or run any exporting command)');
  return lines;
}

/** Renders the report for a terminal. Pure. */
export function formatCheckReport(report: CheckReport): string {
  const lines = ['Where telemetry goes (this environment and these options):'];
  for (const destination of report.destinations) lines.push(`  ${destination}`);
  lines.push(`  output directory: ${report.outDir ?? 'none (no file destination)'}`);
  lines.push(
    `  OTLP headers: ${report.otlpHeaders.length === 0 ? 'none' : `${report.otlpHeaders.join(', ')} (values not shown)`}`,
  );
  lines.push(`  content: ${contentLine(report.content)}`);
  lines.push(
    `  Prometheus endpoint: ${report.prometheus ?? 'off (--prometheus-port or SUBAGENT_OTEL_PROMETHEUS_PORT)'}`,
  );
  lines.push(`  service.name: ${report.serviceName}`);
  if (report.problems.length > 0) {
    lines.push('', 'Problems:');
    for (const problem of report.problems) lines.push(`  - ${problem}`);
  }
  lines.push('', ...outboxText(report));
  lines.push('', ...hooksStatusText(report.hooks));
  lines.push('', `Sent one test span (${SPAN_NAME_CHECK}) and one test metric (${METRIC_SUBAGENT_CHECKS}):`);
  if (report.results.length === 0) lines.push('  nothing: no destination is configured for traces or metrics');
  for (const result of report.results)
    lines.push(
      result.ok ? `  ok      ${result.destination}` : `  FAILED  ${result.destination}: ${result.error ?? 'failed'}`,
    );
  const failed = report.results.filter((r) => !r.ok).length;
  lines.push('');
  if (report.results.length === 0)
    lines.push(
      'check failed: nothing would be delivered (OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER say none, and no --out or --prometheus-port).',
    );
  else if (failed > 0)
    lines.push(`check failed: ${failed} of ${report.results.length} destinations did not take the test data.`);
  else if (report.problems.length > 0)
    lines.push('check failed: the test data was delivered, but the configuration has the problems above.');
  else if (
    report.outbox?.delivered !== undefined &&
    report.outbox.destinations.some((d) => d.requests > 0 && d.configured)
  )
    lines.push('check failed: the test data was delivered, but some of the outbox could not be delivered (see above).');
  else
    lines.push(
      `check passed: ${report.results.length === 1 ? 'the destination' : `all ${report.results.length} destinations`} took the test span and metric.`,
    );
  return lines.join('\n');
}

/** Folder names of the destinations `plan` sends to. */
function configuredFolders(
  place: OutboxPlace,
  plan: ReturnType<typeof planTelemetry>,
  env: NodeJS.ProcessEnv,
): Map<string, ReturnType<typeof openDestinationOutbox>> {
  const boxes = new Map<string, ReturnType<typeof openDestinationOutbox>>();
  const reports = new OnceReporter();
  for (const [signal, otlp] of [
    ['TRACES', plan.traces.otlp],
    ['METRICS', plan.metrics.otlp],
  ] as const) {
    if (otlp === undefined) continue;
    const settings = otlpExporterSettings(signal, otlp, plan.temporality, env, reports);
    const box = openDestinationOutbox(place, settings, otlp.url);
    boxes.set(box.store.dir, box);
  }
  return boxes;
}

/** Every destination folder of the outbox, marked when this configuration sends there. */
async function outboxSummaries(
  place: OutboxPlace,
  plan: ReturnType<typeof planTelemetry>,
): Promise<Array<OutboxSummary & { configured: boolean }>> {
  const configured = configuredFolders(place, plan, {});
  const summaries = await summarizeOutbox(place).catch(() => []);
  return summaries.map((summary) => ({ ...summary, configured: configured.has(summary.folder) }));
}

/**
 * Delivers what waits in the outbox for the destinations of `plan`, oldest
 * first, until each is empty, its destination fails, or `boundMs` passes.
 */
async function deliverOutbox(
  place: OutboxPlace,
  plan: ReturnType<typeof planTelemetry>,
  env: NodeJS.ProcessEnv,
  boundMs: number,
): Promise<{ requests: number; items: number; runs: number; refused: number }> {
  const total = { requests: 0, items: 0, runs: 0, refused: 0 };
  const deadline = Date.now() + boundMs;
  for (const box of configuredFolders(place, plan, env).values()) {
    await box.drain();
    await box.finish(deadline);
    const account = box.account();
    total.requests += account.delivered.requests;
    total.items += account.delivered.items;
    total.runs += account.delivered.runs;
    total.refused += account.refused.requests;
  }
  return total;
}

/**
 * Runs the check (with `--deliver`, after delivering what waits in the
 * outbox for these destinations). @returns 0 when every destination took the
 * test data and the configuration has no problem (and, with `--deliver`,
 * nothing is left waiting for them); 1 otherwise, including when nothing
 * would be delivered. Never rejects for a bad configuration.
 */
export async function runCheck(
  cmd: CheckCommand,
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv },
): Promise<number> {
  installDiagnostics('stderr', io.env, io.stderr);
  const options = telemetryOptions(cmd, io.env);
  const env = options.env ?? io.env;
  // Planned once: planning says each of its warnings once per plan.
  // The test data never goes to the outbox: the check is about delivery now.
  const plan = planTelemetry({ ...options, outbox: false });
  const place: OutboxPlace | undefined =
    typeof options.outbox === 'string'
      ? { dir: options.outbox, maxBytes: readSetting(SETTINGS.outboxMaxBytes, env, new OnceReporter()) }
      : undefined;
  const delivered =
    cmd.deliver && place !== undefined
      ? await deliverOutbox(place, plan, env, flushBoundMs(io.env, DEFAULT_DELIVER_MS))
      : undefined;
  const problems = await configurationProblems(options, plan);
  const anything = deliversAnything(plan);
  const telemetry = createTelemetryFromPlan({ ...options, outbox: false }, plan);
  const destinations = telemetry.describeDestinations();

  telemetry.tracerProvider.getTracer(INSTRUMENTATION_SCOPE_NAME).startSpan(SPAN_NAME_CHECK).end();
  telemetry.meterProvider
    .getMeter(INSTRUMENTATION_SCOPE_NAME)
    .createCounter(METRIC_SUBAGENT_CHECKS, {
      unit: UNIT_CHECKS,
      description: 'Test data points sent by subagent-otel check',
    })
    .add(1);

  const bound = flushBoundMs(io.env, DEFAULT_CHECK_FLUSH_MS);
  const scraped = await prometheusResult(telemetry, bound);
  const shutdown = await telemetry.shutdown(bound);
  const pushed = await Promise.all(
    pushResults(destinations, shutdown).map(async (result): Promise<CheckResult> => {
      const otlp = result.destination.startsWith('traces: OTLP/HTTP')
        ? plan.traces.otlp
        : result.destination.startsWith('metrics: OTLP/HTTP')
          ? plan.metrics.otlp
          : undefined;
      if (result.ok || otlp === undefined || !otlp.url.startsWith('http:')) return result;
      const reason = await probeOtlpHttp(
        otlp.url,
        otlpHeaders(env, result.destination.startsWith('traces') ? 'TRACES' : 'METRICS'),
        bound,
      );
      return reason !== undefined ? { ...result, error: `${reason} (${result.error ?? 'not delivered'})` } : result;
    }),
  );
  const results = anything ? [...pushed, ...(scraped !== undefined ? [scraped] : [])] : [];
  const headers = [
    ...new Set([
      ...(plan.traces.otlp !== undefined ? Object.keys(otlpHeaders(env, 'TRACES')) : []),
      ...(plan.metrics.otlp !== undefined ? Object.keys(otlpHeaders(env, 'METRICS')) : []),
    ]),
  ];
  const hooks = await hooksStatus(env);
  let report: CheckReport = {
    destinations,
    ...(telemetry.outDir !== undefined ? { outDir: telemetry.outDir } : {}),
    otlpHeaders: headers,
    content: {
      capture: telemetry.content.capture,
      ...(telemetry.content.maxLength !== undefined ? { maxLength: telemetry.content.maxLength } : {}),
    },
    ...(telemetry.prometheus !== undefined ? { prometheus: telemetry.prometheus.url } : {}),
    serviceName: serviceNameOf(env) ?? plan.serviceName,
    problems,
    results,
    ...(place !== undefined
      ? {
          outbox: {
            ...place,
            destinations: await outboxSummaries(place, plan),
            ...(delivered !== undefined ? { delivered } : {}),
          },
        }
      : {}),
    ...(hooks !== undefined ? { hooks } : {}),
    ok: false,
  };
  const undelivered =
    delivered !== undefined && (report.outbox?.destinations.some((d) => d.configured && d.requests > 0) ?? false);
  report = { ...report, ok: results.length > 0 && results.every((r) => r.ok) && problems.length === 0 && !undelivered };
  io.stdout.write(cmd.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatCheckReport(report)}\n`);
  return report.ok ? 0 : 1;
}
