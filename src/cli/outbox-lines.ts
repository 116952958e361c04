/**
 * The lines `watch`, `replay` and `demo` say about the outbox at exit: runs
 * put there instead of being delivered, runs delivered from it, refusals for
 * good. Pure presentation of a `TelemetryShutdownReport`.
 *
 * @module subagent-otel/cli/outbox-lines
 */
import type { TelemetryShutdownReport } from '../telemetry/setup.js';

/**
 * What the outbox did, in words: runs put there instead of being delivered,
 * and what was delivered from it. Pure.
 */
export function outboxLines(report: TelemetryShutdownReport): string[] {
  const lines: string[] = [];
  if (report.fromOutbox.requests > 0)
    lines.push(
      `outbox: delivered ${report.fromOutbox.runs} run(s) (${report.fromOutbox.items} span(s) or metric batch(es) in ${report.fromOutbox.requests} request(s)) that waited in the outbox`,
    );
  const waiting = report.outboxed.traces + report.outboxed.metrics;
  if (waiting > 0) {
    lines.push(
      `outbox: ${report.outboxed.runs} run(s) (${report.outboxed.traces} span(s) and ${report.outboxed.metrics} metric batch(es)) were not taken by the destination and went to the outbox; the next command delivers them (now: subagent-otel check --deliver)`,
    );
  }
  if (report.refused.traces + report.refused.metrics > 0)
    lines.push(
      `the destination refused ${report.refused.traces} span(s) and ${report.refused.metrics} metric batch(es) for good (not retried)`,
    );
  return lines;
}
