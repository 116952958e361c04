/**
 * Types of probes.mjs (plain JavaScript, run without a build), for the
 * TypeScript tests in test/stack/.
 *
 * @module subagent-otel/scripts/stack/probes
 */

/** Calls `probe` every 500 ms until it returns something other than undefined; rejects with `what` after `timeoutMs` (default 300 000). */
export declare function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs?: number): Promise<T>;

/** Sum of a metric family over every series matching `labels` in a Prometheus text exposition. */
export declare function scrapeSum(url: string, name: string, labels?: Record<string, string>): Promise<number>;
