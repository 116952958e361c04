/**
 * What the builders of the trace and metric pipelines share while
 * `createTelemetry` builds them: the plan and environment they read, the
 * books they count into, and the lists they add to (destinations, outbox
 * wrappers).
 *
 * @module subagent-otel/telemetry/pipeline-context
 */
import type { Environment } from './content-policy.js';
import type { ExportAccounts } from './export-accounts.js';
import type { TelemetryPlan } from './plan.js';
import type { OnceReporter } from './report-once.js';

/** An exporter that can put every export still waiting for an answer into the outbox. */
export interface Spiller {
  spill(): Promise<void>;
}

/** The shared state of one `createTelemetry` while its pipelines are built. */
export interface PipelineContext {
  readonly env: Environment;
  readonly plan: TelemetryPlan;
  readonly reports: OnceReporter;
  readonly accounts: ExportAccounts;
  /** One line per destination, in the order the pipelines are built (`describeDestinations`). */
  readonly destinations: string[];
  /** The outbox wrappers of the OTLP exporters, spilled by `settle` and `shutdown`. */
  readonly spillers: Spiller[];
  /** The `consoleStream` option; `process.stderr` when absent (read only when a console exporter is built). */
  readonly consoleStream: NodeJS.WritableStream | undefined;
}
