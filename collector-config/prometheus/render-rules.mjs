#!/usr/bin/env node
/**
 * The one source of the Prometheus recording and alerting rules shipped in
 * `collector-config/prometheus/rules.yml`. `renderRules(settings)` turns a set
 * of thresholds and windows into the rules file text; the committed
 * `rules.yml` is `renderRules(PRODUCTION_SETTINGS)` byte for byte (a test
 * checks it), and the live end-to-end test renders the very same expressions
 * with second-long windows instead of keeping a hand-written copy.
 *
 * Metric and label names are written here in their Prometheus form; a test
 * derives the allowed names from `src/telemetry/semconv.ts` and fails on any
 * name this file uses that the code does not emit.
 *
 * Plain JavaScript on purpose: it runs with `node` alone, without a build.
 *
 *   node collector-config/prometheus/render-rules.mjs            # rewrite rules.yml
 *   node collector-config/prometheus/render-rules.mjs --stdout   # print instead
 *
 * @module subagent-otel/collector-config/prometheus/render-rules
 */

import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Thresholds and windows of the shipped rules. Why these values:
 * `docs/decisions/0005-alert-thresholds.md`.
 */
export const PRODUCTION_SETTINGS = Object.freeze({
  /** Range over which the truncation ratio and the run volume are measured. */
  truncationWindow: '1h',
  /** Share of `max-tokens` runs above which the warning alert is pending. */
  truncationWarningRatio: 0.1,
  /** Share of `max-tokens` runs above which the critical alert is pending. */
  truncationCriticalRatio: 0.25,
  /** How long the warning condition must hold before it fires. */
  truncationWarningFor: '15m',
  /** How long the critical condition must hold before it fires. */
  truncationCriticalFor: '5m',
  /** Fewest runs in the window (per service and agent) for either alert. */
  truncationMinRuns: 20,
  /** Range over which a reported output mismatch keeps its alert firing. */
  mismatchWindow: '15m',
  /** Range over which malformed frames are counted. */
  malformedWindow: '1h',
  /** Fewest malformed frames in the window (per service and origin) for the alert. */
  malformedMinFrames: 10,
});

const DURATION = /^[1-9][0-9]*(ms|s|m|h|d|w|y)$/;

/**
 * Checks one settings object; throws a `TypeError` naming the first bad
 * field. Never mutates its input.
 * @param {Record<string, unknown>} s
 */
function validate(s) {
  for (const key of [
    'truncationWindow',
    'truncationWarningFor',
    'truncationCriticalFor',
    'mismatchWindow',
    'malformedWindow',
  ]) {
    if (typeof s[key] !== 'string' || !DURATION.test(/** @type {string} */ (s[key]))) {
      throw new TypeError(
        `${key} must be a single-unit Prometheus duration such as "15m", got ${JSON.stringify(s[key])}`,
      );
    }
  }
  for (const key of ['truncationWarningRatio', 'truncationCriticalRatio']) {
    const v = s[key];
    if (typeof v !== 'number' || !(v > 0 && v < 1)) {
      throw new TypeError(`${key} must be a number strictly between 0 and 1, got ${JSON.stringify(v)}`);
    }
  }
  if (/** @type {number} */ (s.truncationWarningRatio) >= /** @type {number} */ (s.truncationCriticalRatio)) {
    throw new TypeError('truncationWarningRatio must be below truncationCriticalRatio');
  }
  for (const key of ['truncationMinRuns', 'malformedMinFrames']) {
    const v = s[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
      throw new TypeError(`${key} must be a positive integer, got ${JSON.stringify(v)}`);
    }
  }
}

/** `0.1` -> `10%`, `0.25` -> `25%` (for annotation prose). */
function percent(ratio) {
  return `${Number((ratio * 100).toFixed(4))}%`;
}

/**
 * Recording-rule names for the given truncation window, e.g. for `1h`:
 * `job_gen_ai_agent_name:subagent_runs:increase1h`.
 * @param {string} window a Prometheus duration such as `1h`
 * @returns {{ runs: string, maxTokens: string, ratio: string, cost: string }} never throws
 */
export function recordNames(window) {
  return {
    runs: `job_gen_ai_agent_name:subagent_runs:increase${window}`,
    maxTokens: `job_gen_ai_agent_name:subagent_runs_max_tokens:increase${window}`,
    ratio: `job_gen_ai_agent_name:subagent_max_tokens_truncation:ratio${window}`,
    cost: `job_gen_ai_agent_name_subagent_stop_reason:subagent_cost_usd:increase${window}`,
  };
}

/**
 * The increments of every series matched by `selector` within the window
 * `w`, per series: `increase()` for a series that already had a sample a
 * window ago, and the whole current value for a series born inside the window
 * (the counters start at zero, so a first sample of N means N increments;
 * `increase()` needs two samples and cannot see that first step). The two arms
 * never hold the same series. Used in place of `increase(selector[w])`.
 * @param {string} selector a series selector such as `subagent_runs_total{subagent_stop_reason="max-tokens"}`
 * @param {string} w a Prometheus duration
 * @param {string} indent prefix of every line after the first
 * @returns {string} a PromQL instant-vector expression over several lines; never throws
 */
function inWindow(selector, w, indent) {
  return [
    `(increase(${selector}[${w}]) and ${selector} offset ${w})`,
    `${indent}or`,
    `${indent}(${selector} unless ${selector} offset ${w})`,
  ].join('\n');
}

/**
 * Renders the complete rules file.
 * @param {Partial<typeof PRODUCTION_SETTINGS>} [overrides] fields to change
 *   from `PRODUCTION_SETTINGS` (the live test shortens the windows).
 * @returns {string} the YAML text, ending in one newline; the same settings
 *   always give the same bytes. Throws a `TypeError` on an invalid setting;
 *   never reads or writes files.
 */
export function renderRules(overrides = {}) {
  const s = { ...PRODUCTION_SETTINGS, ...overrides };
  validate(s);
  const w = s.truncationWindow;
  const names = recordNames(w);
  const by = 'sum by (job, gen_ai_agent_name)';
  const mt = 'subagent_stop_reason="max-tokens"';
  const mw = s.mismatchWindow;
  const fw = s.malformedWindow;

  const truncationAlert = (severity, ratio, forDuration) => `      - alert: SubagentMaxTokensTruncationRateHigh
        expr: |-
          ${names.ratio} > ${ratio}
          and
          ${names.runs} >= ${s.truncationMinRuns}
        for: ${forDuration}
        labels:
          severity: ${severity}
        annotations:
          summary: "{{ $value | humanizePercentage }} of the runs of agent {{ $labels.gen_ai_agent_name }} in {{ $labels.job }} stopped at max-tokens"
          description: "More than ${percent(ratio)} of at least ${s.truncationMinRuns} runs in the last ${w} ended at their token limit, so the parent got partial output. Search Jaeger for subagent.stop_reason=max-tokens to see the runs."
`;

  return `# GENERATED by collector-config/prometheus/render-rules.mjs from PRODUCTION_SETTINGS.
# Do not edit by hand: change the renderer, then run
#   node collector-config/prometheus/render-rules.mjs
# Thresholds and windows are explained in docs/decisions/0005-alert-thresholds.md.
#
# The rules read the counters under the names both metric paths expose: the
# observer's own /metrics endpoint and the collector's prometheus exporter
# (see collector-config/otelcol.yaml). "job" is the service: the scrape job on
# a direct scrape, service.namespace/service.name through the collector.
groups:
  - name: subagent-otel.truncation
    rules:
      # Runs finished in the last ${w}, per service and agent. The observer's own
      # counter wins; a service that sends traces only is counted from its run
      # spans by the collector's count connector (subagent_runs_from_spans_total).
      # Per series: increase() when the series existed a window ago; its whole
      # value when it was born inside the window (the first export after a
      # collector start, a new service or agent), which increase() cannot see.
      - record: ${names.runs}
        expr: |-
          ${by} (
            ${inWindow('subagent_runs_total', w, '            ')}
          )
          or
          ${by} (
            ${inWindow('subagent_runs_from_spans_total', w, '            ')}
          )
      # Runs that stopped at max-tokens, from the same source and counted the
      # same way as the line above (0 when a service had runs but none hit the
      # limit).
      - record: ${names.maxTokens}
        expr: |-
          (
            ${by} (
              ${inWindow(`subagent_runs_total{${mt}}`, w, '              ')}
            )
            or
            0 * ${by} (
              ${inWindow('subagent_runs_total', w, '              ')}
            )
          )
          or
          (
            ${by} (
              ${inWindow(`subagent_runs_from_spans_total{${mt}}`, w, '              ')}
            )
            or
            0 * ${by} (
              ${inWindow('subagent_runs_from_spans_total', w, '              ')}
            )
          )
      # The max-tokens truncation rate: runs that stopped at max-tokens over all
      # runs, per service and agent (NaN, so never alerting, without runs).
      - record: ${names.ratio}
        expr: |-
          ${names.maxTokens}
          / on (job, gen_ai_agent_name)
          ${names.runs}
${truncationAlert('warning', s.truncationWarningRatio, s.truncationWarningFor)}${truncationAlert('critical', s.truncationCriticalRatio, s.truncationCriticalFor)}
  - name: subagent-otel.cost
    rules:
      # What finished runs cost in US dollars in the last ${w} (runs read from
      # coding agents' transcripts carry a cost), per service, agent and stop
      # reason: what the runs cut off at max-tokens cost is the money spent on
      # partial answers. Counted like the run counts above.
      - record: ${names.cost}
        expr: |-
          sum by (job, gen_ai_agent_name, subagent_stop_reason) (
            ${inWindow('subagent_cost_usd_total', w, '            ')}
          )

  - name: subagent-otel.integrity
    rules:
      # A runtime reported a last assistant message that differs from the
      # observer's selection. A counter series born within the window is caught
      # by the "unless ... offset" arm, since increase() cannot see its first step.
      - alert: SubagentOutputMismatchReported
        expr: |-
          ${by} (increase(subagent_output_mismatches_total[${mw}])) > 0
          or
          ${by} (subagent_output_mismatches_total unless subagent_output_mismatches_total offset ${mw}) > 0
        labels:
          severity: warning
        annotations:
          summary: "A runtime reported an output that differs from the observed one (agent {{ $labels.gen_ai_agent_name }} in {{ $labels.job }})"
          description: "In the last ${mw} a runtime's own lastAssistantMessage did not match the output selected by subagent-otel. Find the runs with subagent.reported_output.match=false in Jaeger."
      # Frames that failed validation and were skipped, per service and origin.
      - alert: SubagentMalformedFrames
        expr: |-
          sum by (job, subagent_frame_origin) (increase(subagent_frames_malformed_total[${fw}])) >= ${s.malformedMinFrames}
          or
          sum by (job, subagent_frame_origin) (subagent_frames_malformed_total unless subagent_frames_malformed_total offset ${fw}) >= ${s.malformedMinFrames}
        labels:
          severity: warning
        annotations:
          summary: "{{ $value | humanize }} malformed frames from {{ $labels.subagent_frame_origin }} in {{ $labels.job }}"
          description: "At least ${s.malformedMinFrames} frames in the last ${fw} failed validation and were skipped; a runtime may speak a protocol version the observer does not know."
`;
}

/**
 * CLI: writes `renderRules()` to `rules.yml` beside this file, or prints it
 * with `--stdout`. Exits 2 on an unknown argument.
 */
function main(argv) {
  const unknown = argv.filter((a) => a !== '--stdout');
  if (unknown.length > 0) {
    process.stderr.write(`render-rules: unknown argument ${unknown[0]}\nusage: node render-rules.mjs [--stdout]\n`);
    process.exitCode = 2;
    return;
  }
  const text = renderRules();
  if (argv.includes('--stdout')) {
    process.stdout.write(text);
    return;
  }
  const out = fileURLToPath(new URL('./rules.yml', import.meta.url));
  writeFileSync(out, text);
  process.stderr.write(`render-rules: wrote ${out}\n`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2));
}
