/**
 * Types of render-rules.mjs (plain JavaScript, run without a build), for the
 * TypeScript tests that import it.
 *
 * @module subagent-otel/collector-config/prometheus/render-rules
 */

/** Thresholds and windows of the rules; durations are single-unit Prometheus durations ("15m"). */
export interface RuleSettings {
  readonly truncationWindow: string;
  readonly truncationWarningRatio: number;
  readonly truncationCriticalRatio: number;
  readonly truncationWarningFor: string;
  readonly truncationCriticalFor: string;
  readonly truncationMinRuns: number;
  readonly mismatchWindow: string;
  readonly malformedWindow: string;
  readonly malformedMinFrames: number;
}

/** The settings the committed rules.yml is rendered from. */
export declare const PRODUCTION_SETTINGS: Readonly<RuleSettings>;

/** Recording-rule names for a truncation window; never throws. */
export declare function recordNames(window: string): { runs: string; maxTokens: string; ratio: string };

/**
 * The rules file text for `PRODUCTION_SETTINGS` with `overrides` applied; the
 * same settings always give the same bytes. Throws a `TypeError` on an invalid
 * setting; never reads or writes files.
 */
export declare function renderRules(overrides?: Partial<RuleSettings>): string;
