/**
 * Types of stack.mjs (plain JavaScript, run without a build), for the
 * TypeScript tests in test/stack/.
 *
 * @module subagent-otel/scripts/stack/stack
 */

export declare const PUBLISHED: {
  readonly otlpGrpc: number;
  readonly otlpHttp: number;
  readonly jaegerUi: number;
  readonly prometheus: number;
  readonly alertmanager: number;
};

/** Addresses of one collector process. */
export interface CollectorUrls {
  readonly otlpGrpc: string;
  readonly otlpHttp: string;
  /** Its prometheus exporter (empty `/metrics` on an agent). */
  readonly metrics: string;
  /** Its own telemetry (otelcol_* metrics). */
  readonly telemetry: string;
}

export interface StackUrls {
  /** Where the observer sends (the single-tier collector or the agent). */
  readonly otlpHttp: string;
  readonly otlpGrpc: string;
  readonly jaeger: string;
  readonly prometheus: string;
  readonly alertmanager: string;
  readonly collectors: Readonly<Record<string, CollectorUrls>>;
}

export interface Stack {
  readonly dir: string;
  readonly tiers: 1 | 2;
  readonly urls: StackUrls;
  pid(name: string): number | undefined;
  /** Ends one process (default SIGTERM; SIGKILL after 10 s) and waits for its exit. */
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  /** Starts one stopped process again on its ports; resolves once it is ready. */
  start(name: string): Promise<void>;
  logTail(name: string): string;
  /** Ends every process. Never rejects. */
  stop(): Promise<void>;
}

export interface StartStackOptions {
  readonly dir: string;
  readonly tiers?: 1 | 2;
  readonly ports?: 'free' | 'published';
  /** rules.yml text instead of the shipped rules. */
  readonly rules?: string;
  /** COMPLETED_TRACE_SAMPLING_PERCENTAGE and TAIL_SAMPLING_DECISION_WAIT for the gateways. */
  readonly env?: Readonly<Record<string, string>>;
  /** Config files every collector loads after its own (one `--config` each; the collector merges them key by key). */
  readonly collectorConfigs?: readonly string[];
  readonly detached?: boolean;
  readonly readyTimeoutMs?: number;
  readonly log?: (line: string) => void;
}

export declare function startStack(options: StartStackOptions): Promise<Stack>;
export declare function stopStack(dir: string, log?: (line: string) => void): Promise<string[]>;
export declare function stackStatus(
  dir: string,
): { tiers: 1 | 2; urls: StackUrls; processes: Record<string, { pid: number; alive: boolean }> } | undefined;
