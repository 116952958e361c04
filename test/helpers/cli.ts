/**
 * Helpers for end-to-end tests of the built CLI: spawn it with real pipes,
 * collect bytes, wait for exit, and read OTLP-JSON lines files back.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI } from './paths.js';

/**
 * An environment without a caller's trace context, collector or exporters, so a command under test writes only
 * to its `--out` (merged over the test process's own environment by `runCli`/`spawnCli`).
 */
export const QUIET_ENV: NodeJS.ProcessEnv = {
  TRACEPARENT: '',
  TRACESTATE: '',
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  OTEL_TRACES_EXPORTER: '',
  OTEL_METRICS_EXPORTER: '',
};

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
}

/** Spawns `node dist/cli/subagent-otel.js ...args` (the bundled CLI). */
export function spawnCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): ChildProcessWithoutNullStreams {
  return spawnCommand(process.execPath, [CLI, ...args], env);
}

/** Spawns `file ...args` with real pipes and `env` over this process's environment (an installed `subagent-otel`, say). */
export function spawnCommand(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): ChildProcessWithoutNullStreams {
  return spawn(file, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Collects a child's output until it exits and its streams close. */
export function finished(child: ChildProcessWithoutNullStreams): Promise<Finished> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  return new Promise((resolve) => {
    child.once('close', (code, signal) =>
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }),
    );
  });
}

/** Runs the CLI with `input` on stdin (then EOF) and waits for it. */
export async function runCli(
  args: readonly string[],
  input: Buffer | string = '',
  env: NodeJS.ProcessEnv = {},
): Promise<Finished> {
  return runCommand(process.execPath, [CLI, ...args], input, env);
}

/** Runs `file ...args` with `input` on stdin (then EOF) and waits for it. */
export async function runCommand(
  file: string,
  args: readonly string[],
  input: Buffer | string = '',
  env: NodeJS.ProcessEnv = {},
): Promise<Finished> {
  const child = spawnCommand(file, args, env);
  const done = finished(child);
  child.stdin.on('error', () => undefined); // EPIPE when the child exits before reading all: the test asserts on exit instead
  child.stdin.end(input);
  return done;
}

/** Resolves with the first stdout line for which `match` is true (lines are JSON-parsed when possible). */
/**
 * Matches the runtime's `session.status idle` line of `sessionId`: the end of
 * a prompted run (the runtime answers `session/prompt` earlier, on queueing).
 */
export function isIdleLine(sessionId: string): (line: string) => boolean {
  return (line) =>
    line.includes('"method":"session.status"') &&
    line.includes('"status":"idle"') &&
    line.includes(`"sessionId":"${sessionId}"`);
}

export function waitForLine(child: ChildProcessWithoutNullStreams, match: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8');
      let nl = buffered.indexOf('\n');
      while (nl !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (match(line)) {
          child.stdout.off('data', onData);
          resolve(line);
          return;
        }
        nl = buffered.indexOf('\n');
      }
    };
    child.stdout.on('data', onData);
    child.once('close', () => reject(new Error('process closed before the expected line arrived')));
  });
}

export interface OtlpAttribute {
  key: string;
  value: {
    stringValue?: string;
    intValue?: number | string;
    boolValue?: boolean;
    doubleValue?: number;
    arrayValue?: { values: Array<{ stringValue?: string }> };
  };
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  status?: { code?: number; message?: string };
}

/** All spans in a `traces.jsonl` file. */
export function readSpans(dir: string): OtlpSpan[] {
  const file = join(dir, 'traces.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .flatMap(
      (l) => (JSON.parse(l) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }).resourceSpans,
    )
    .flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
}

/** A span's attributes as a plain map (arrays of strings as arrays, ints as numbers). */
export function attributes(span: OtlpSpan): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of span.attributes) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.arrayValue !== undefined) out[key] = value.arrayValue.values.map((v) => v.stringValue);
  }
  return out;
}

/** NDJSON request line. */
export function rpc(id: number | undefined, method: string, params?: unknown): string {
  return `${JSON.stringify({ jsonrpc: '2.0', ...(id !== undefined ? { id } : {}), method, ...(params !== undefined ? { params } : {}) })}\n`;
}
