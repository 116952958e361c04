/**
 * Finds what makes a telemetry configuration unusable before anything is
 * exported: an output directory that cannot be written, an OTLP endpoint that
 * is no URL, an exporter name that is not supported, a signal that goes
 * nowhere by accident. Cheap and side-effect free apart from creating the
 * output directory (which the file exporter would create anyway). Used by the
 * proxy (one warning line) and by `subagent-otel check`.
 *
 * @module subagent-otel/telemetry/config-problems
 */
import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SETTINGS, type Environment } from './config.js';
import { exampleEndpoint, isOtlpEndpoint, OTLP_ENDPOINT_VARIABLES } from './otlp-endpoint.js';
import { METRICS_FILE_NAME, TRACES_FILE_NAME } from './otlp-json-file-exporter.js';
import type { TelemetryOptions, TelemetryPlan } from './setup.js';
import { errorMessage } from '../wire/error-text.js';

/** Exporter names `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` may list. */
const SUPPORTED_EXPORTERS = ['otlp', 'console', 'none'];

function errorCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : errorMessage(error);
}

async function unwritableFile(dir: string, name: string): Promise<string | undefined> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    return `cannot create the output directory ${dir} (${errorCode(error)})`;
  }
  try {
    await access(dir, constants.W_OK);
  } catch (error) {
    return `cannot write to the output directory ${dir} (${errorCode(error)})`;
  }
  const file = join(dir, name);
  try {
    const info = await stat(file);
    if (!info.isFile()) return `${file} exists and is not a regular file`;
    await access(file, constants.W_OK);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') return `cannot append to ${file} (${errorCode(error)})`;
  }
  return undefined;
}

/**
 * The problems of a configuration, one sentence each, in a fixed order:
 * exporter names, endpoints, output files, then the capture file.
 *
 * @param options the `createTelemetry` options (with the environment to read).
 * @param plan `planTelemetry(options)`, made once by the caller (planning again would repeat its warnings).
 * @param capture the proxy's `--capture` file, when given.
 * @returns an empty array when everything is usable. Never rejects; never
 *   names header values or URL credentials.
 */
export async function configurationProblems(
  options: TelemetryOptions,
  plan: TelemetryPlan,
  capture?: string,
): Promise<string[]> {
  const env: Environment = options.env ?? process.env;
  const problems: string[] = [];
  for (const variable of ['OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER']) {
    const names = (env[variable] ?? '').split(',').map((n) => n.trim().toLowerCase());
    const unknown = names.filter((n) => n !== '' && !SUPPORTED_EXPORTERS.includes(n));
    if (unknown.length > 0)
      problems.push(
        `${variable} names ${unknown.map((n) => JSON.stringify(n)).join(', ')}, which is not supported (use ${SUPPORTED_EXPORTERS.join(', ')})`,
      );
  }
  const general = SETTINGS.otlpProtocol.parse(env[SETTINGS.otlpProtocol.env] ?? '') ?? SETTINGS.otlpProtocol.default;
  for (const variable of OTLP_ENDPOINT_VARIABLES) {
    const value = env[variable.endpoint]?.trim();
    if (value === undefined || value === '') continue;
    const protocol =
      (variable.protocol === undefined ? undefined : SETTINGS.otlpProtocol.parse(env[variable.protocol] ?? '')) ??
      general;
    if (!isOtlpEndpoint(value, protocol))
      problems.push(`${variable.endpoint} is not a URL such as ${exampleEndpoint(protocol)}`);
  }
  const files: Array<[string, string]> = [];
  if (plan.traces.fileDir !== undefined) files.push([plan.traces.fileDir, TRACES_FILE_NAME]);
  if (plan.metrics.fileDir !== undefined) files.push([plan.metrics.fileDir, METRICS_FILE_NAME]);
  const reported = new Set<string>();
  for (const [dir, name] of files) {
    const problem = await unwritableFile(dir, name);
    if (problem !== undefined && !reported.has(problem)) {
      reported.add(problem);
      problems.push(problem);
    }
  }
  if (capture !== undefined) {
    try {
      const info = await stat(capture).catch((error: unknown) => {
        if (errorCode(error) === 'ENOENT') return undefined;
        throw error;
      });
      if (info !== undefined && !info.isFile())
        problems.push(`the capture file ${capture} exists and is not a regular file`);
      else await access(info !== undefined ? capture : dirname(capture), constants.W_OK);
    } catch (error) {
      problems.push(`cannot write the capture file ${capture} (${errorCode(error)})`);
    }
  }
  return problems;
}

/**
 * Whether the configuration sends anything anywhere: some trace or metric
 * destination (OTLP, file, console) or the Prometheus endpoint. Pure.
 */
export function deliversAnything(plan: TelemetryPlan): boolean {
  const goes = (signal: typeof plan.traces): boolean =>
    signal.otlp !== undefined || signal.fileDir !== undefined || signal.console;
  return goes(plan.traces) || goes(plan.metrics) || plan.prometheus !== undefined;
}
