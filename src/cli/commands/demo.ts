/**
 * `subagent-otel demo`, the main job: runs the bundled keyless scripted SDK
 * runtime through every scenario twice — through the SDK backend (embedded
 * log generation) and through the stdio proxy (chunk log generation) — and
 * the scripted ACP agent through the ACP backend, sends the telemetry to the
 * configured destination (the embedded OTLP-JSON-lines files by default), and
 * prints one row per observed run. Each run starts from empty files: the
 * `traces.jsonl` and `metrics.jsonl` an earlier run left in the output
 * directory are removed first (and that is said), and what was written is
 * counted at the end. With `--sessions <dir>` it also writes the durable
 * session logs of the proxied runtime's sessions there, for `replay`. Owns
 * only orchestration and presentation: every run goes through the same
 * backends, proxy bridge and trackers that users attach to their own agents.
 *
 * @module subagent-otel/cli/commands/demo
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { writeDurableLogFile } from '../../fixtures/durable-log-writer.js';
import type { JsonRpcFrame } from '../../wire/jsonrpc.js';
import { runAcpSubagent } from '../../backend/acp-backend.js';
import { runSdkSubagent } from '../../backend/sdk-backend.js';
import type { RunListener, RunRecord } from '../../observe/run-record.js';
import {
  createTelemetryFromPlan,
  OUT_FILE_NAMES,
  planTelemetry,
  type Telemetry,
  type TelemetryShutdownReport,
} from '../../telemetry/setup.js';
import type { DemoCommand } from './demo-command.js';
import { SETTINGS } from '../../telemetry/config.js';
import { runStdioProxy } from '../../proxy/stdio-proxy.js';
import { formatRunTable } from '../summary.js';
import { checkOutputDirectory } from '../output-paths.js';
import { flushBoundMs, installDiagnostics, telemetryOptions } from '../telemetry-options.js';
import { isOutputMismatch } from '../../replay/replay.js';
import { observeConversation } from '../../proxy/proxy-observation.js';
import { errorMessage } from '../../wire/error-text.js';

export type { DemoCommand };

const SDK_RUNTIME = fileURLToPath(new URL('../../fixtures/sdk-runtime.js', import.meta.url));
const ACP_AGENT = fileURLToPath(new URL('../../fixtures/acp-agent.js', import.meta.url));

/** SDK runtime scenarios the demo plays (names of `src/fixtures/sdk-runtime`). */
export const DEMO_SDK_SCENARIOS = [
  'completed',
  'empty-message',
  'multi-step-max-tokens',
  'cancelled-attempt',
  'reasoning-only',
  'error',
  'no-output',
  'subagent',
  'subagent-wrong-report',
] as const;
/** ACP agent scenarios the demo plays (names of `src/fixtures/acp-agent.ts`). */
export const DEMO_ACP_SCENARIOS = [
  'end_turn',
  'max-tokens',
  'refusal',
  'max_turn_requests',
  'non-text-only',
  'thoughts',
  'permission',
  'codex-output-limit',
  'claude-output-limit',
  'gemini-quota',
  'claude-tool',
  'permission-inline',
] as const;

const ROUTE = { provider: 'deepseek', model: 'deepseek-chat' } as const;

/** Bound on the demo's final telemetry flush, in ms (`SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS`). */
export const DEFAULT_DEMO_FLUSH_MS = 5000;

/** One observed run with how the demo produced it. */
export interface DemoRow {
  readonly via: 'sdk-backend' | 'sdk-proxy' | 'acp-backend';
  readonly scenario: string;
  readonly record: RunRecord;
}

/** A listener that forwards to telemetry and keeps each finished run for the table. */
function collecting(target: RunListener, rows: DemoRow[], label: () => Pick<DemoRow, 'via' | 'scenario'>): RunListener {
  return {
    onRunStart: (start) => target.onRunStart(start),
    onRunEnd: (record) => {
      target.onRunEnd(record);
      rows.push({ ...label(), record });
    },
    onMalformed: (origin, error) => target.onMalformed?.(origin, error),
  };
}

/** One session the runtime wrote, as the demo saw it on the wire: its events in order, and its parent when delegated. */
export interface RecordedSession {
  readonly id: string;
  readonly parent?: string;
  readonly events: unknown[];
}

/** Collects `session.event` and `subagent.started` notifications per session. */
function sessionRecorder(): { onLine: (line: string) => void; sessions: Map<string, RecordedSession> } {
  const sessions = new Map<string, RecordedSession>();
  const parents = new Map<string, string>();
  const onLine = (line: string): void => {
    if (!line.startsWith('{"jsonrpc":"2.0","method":"s')) return;
    const frame = JSON.parse(line) as {
      method?: string;
      params?: { sessionId?: string; event?: unknown; parentSessionId?: string; childSessionId?: string };
    };
    if (
      frame.method === 'subagent.started' &&
      typeof frame.params?.childSessionId === 'string' &&
      typeof frame.params.parentSessionId === 'string'
    ) {
      parents.set(frame.params.childSessionId, frame.params.parentSessionId);
      return;
    }
    if (frame.method !== 'session.event' || typeof frame.params?.sessionId !== 'string') return;
    const id = frame.params.sessionId;
    let session = sessions.get(id);
    if (session === undefined) {
      const parent = parents.get(id);
      session = { id, ...(parent !== undefined ? { parent } : {}), events: [] };
      sessions.set(id, session);
    }
    session.events.push(frame.params.event);
  };
  return { onLine, sessions };
}

/** Drives one runtime process through the in-process proxy bridge, one scenario per prompt. */
async function throughProxy(
  listener: RunListener,
  scenarios: readonly string[],
  onScenario: (s: string) => void,
  onLine?: (line: string) => void,
): Promise<void> {
  const toChild = new PassThrough();
  const fromChild = new PassThrough();
  const { tap, observer } = observeConversation(listener, { protocol: 'auto' });
  const exited = runStdioProxy({
    command: process.execPath,
    args: [SDK_RUNTIME],
    env: { ...process.env, FAKE_LOG_GENERATION: 'chunk' },
    stdin: toChild,
    stdout: fromChild,
    stderr: new PassThrough().resume(),
    signals: [],
    onChunk: (direction, chunk) => tap.push(direction, chunk),
    onEnd: (direction) => tap.end(direction),
  });
  const waiting = new Map<number, () => void>();
  // The runtime answers session/prompt on queueing; a run is over when its session goes idle.
  const idle = new Map<string, () => void>();
  let buffered = '';
  fromChild.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      onLine?.(line);
      if (line.startsWith('{"jsonrpc":"2.0","method":"session.status"')) {
        const params = (JSON.parse(line) as { params?: { sessionId?: unknown; status?: unknown } }).params;
        if (params?.status === 'idle' && typeof params.sessionId === 'string') idle.get(params.sessionId)?.();
        continue;
      }
      if (!line.startsWith('{"jsonrpc":"2.0","id":')) continue;
      const id = (JSON.parse(line) as { id?: unknown }).id;
      if (typeof id === 'number') waiting.get(id)?.();
    }
  });
  let nextId = 0;
  const request = (method: string, params?: unknown): Promise<void> => {
    nextId += 1;
    const id = nextId;
    const answered = new Promise<void>((resolve) => waiting.set(id, resolve));
    toChild.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) })}\n`);
    return Promise.race([answered, exited.then(() => undefined)]);
  };
  await request('initialize', { cwd: process.cwd(), ...ROUTE });
  for (const scenario of scenarios) {
    onScenario(scenario);
    const sessionId = `proxy-${scenario}`;
    const done = new Promise<void>((resolve) => idle.set(sessionId, resolve));
    await request('session/prompt', { sessionId, contentBlocks: [{ type: 'text', text: `scenario:${scenario}` }] });
    await Promise.race([done, exited.then(() => undefined)]);
  }
  await request('shutdown');
  toChild.end();
  const exit = await exited;
  observer.close(Date.now(), `the runtime exited with code ${String(exit.code)}`);
}

/** Aborts once an SDK runtime has streamed its first text delta (the demo's cancellation). */
function abortOnFirstText(controller: AbortController) {
  return (direction: string, frame: JsonRpcFrame): void => {
    if (direction !== 'agent->client' || frame.kind !== 'notification' || frame.method !== 'session.event') return;
    const event = (frame.params as { event?: { type?: string; data?: { chunk?: { type?: string } } } }).event;
    if (event?.type === 'assistant/chunk' && event.data?.chunk?.type === 'text-delta') controller.abort();
  };
}

/** Renders the demo's table: one row per run, led by how it was produced. Pure. */
export function formatDemoTable(rows: readonly DemoRow[]): string {
  return formatRunTable(
    rows.map((r) => r.record),
    {
      leading: {
        headers: ['via', 'scenario'],
        cells: (record, index) => {
          const row = rows[index];
          return [
            row?.via ?? '',
            record.source === 'sdk-subagent' ? `${row?.scenario ?? ''} (child)` : (row?.scenario ?? ''),
          ];
        },
      },
    },
  );
}

/** Lines and spans (or metric data points) in an OTLP-JSON-lines file; zeros when it is missing. */
async function countFile(path: string, signal: 'traces' | 'metrics'): Promise<{ lines: number; items: number }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    // Missing (nothing was written) or unreadable: nothing to count.
    return { lines: 0, items: 0 };
  }
  const lines = text.split('\n').filter((l) => l !== '');
  let items = 0;
  for (const line of lines) {
    try {
      const doc = JSON.parse(line) as Record<
        string,
        Array<{ scopeSpans?: Array<{ spans?: unknown[] }>; scopeMetrics?: Array<{ metrics?: unknown[] }> }>
      >;
      for (const resource of doc[signal === 'traces' ? 'resourceSpans' : 'resourceMetrics'] ?? []) {
        for (const scope of resource.scopeSpans ?? []) items += scope.spans?.length ?? 0;
        for (const scope of resource.scopeMetrics ?? []) items += scope.metrics?.length ?? 0;
      }
    } catch {
      // A line another writer left incomplete is not counted.
    }
  }
  return { lines: lines.length, items };
}

/**
 * Removes the demo's own files (`traces.jsonl`, `metrics.jsonl`) from the
 * output directories it is about to write. @returns one phrase per removed
 * file, e.g. `/x/traces.jsonl (120 lines)`. Never rejects.
 */
async function clearOwnFiles(files: readonly string[]): Promise<string[]> {
  const removed: string[] = [];
  for (const file of files) {
    const before = await countFile(file, 'traces');
    try {
      await rm(file);
      removed.push(`${file} (${before.lines} line${before.lines === 1 ? '' : 's'})`);
    } catch {
      // ENOENT: nothing left by an earlier run. Anything else the exporter reports when it writes.
    }
  }
  return removed;
}

/** Writes every recorded session as a durable log: parents zstd-compressed, delegated children plain. @returns the paths written. */
async function writeSessions(
  dir: string,
  sessions: Iterable<RecordedSession>,
  note: (what: string) => void,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  let zstdMissing = false;
  for (const session of sessions) {
    const first = session.events[0] as { time?: unknown } | undefined;
    const header = {
      type: 'session',
      version: 1,
      id: session.id,
      cwd: process.cwd(),
      createdAt: new Date(typeof first?.time === 'number' ? first.time : Date.now()).toISOString(),
      ...(session.parent !== undefined ? { parentSession: session.parent } : {}),
      delegationDepth: session.parent !== undefined ? 1 : 0,
    };
    const plainPath = join(dir, `${session.id}.jsonl`);
    if (session.parent === undefined && !zstdMissing) {
      const path = `${plainPath}.zstd`;
      try {
        await writeDurableLogFile(path, header, session.events, { pack: true, zstd: true, batchSize: 8 });
        written.push(path);
        continue;
      } catch (error) {
        zstdMissing = true;
        note(`cannot compress session logs (${errorMessage(error)}); writing plain .jsonl instead`);
      }
    }
    await writeDurableLogFile(plainPath, header, session.events, { pack: true, zstd: false });
    written.push(plainPath);
  }
  return written;
}

/**
 * Runs the demo. @returns the exit code: 0 when every scenario ran (runs
 * that stop early are part of the demo) and its telemetry was delivered, 1
 * when a scripted peer could not be started, 2 when the output directory
 * cannot be written (checked before any work), 3 when some telemetry could
 * not be delivered (the exact counts on stderr). Prints the table (or JSON)
 * on stdout, progress on stderr.
 */
export async function runDemo(
  cmd: DemoCommand,
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv },
): Promise<number> {
  installDiagnostics('stderr', io.env, io.stderr);
  const progress = (what: string): void => void io.stderr.write(`demo: ${what}\n`);
  const options = telemetryOptions(cmd, io.env);
  const plan = planTelemetry(options);
  const telemetry = createTelemetryFromPlan(options, plan);
  if (telemetry.outDir !== undefined) {
    const unusable = await checkOutputDirectory(telemetry.outDir);
    if (unusable !== undefined) {
      io.stderr.write(`subagent-otel demo: output directory ${telemetry.outDir}: ${unusable}\n`);
      await telemetry.shutdown(0);
      return 2;
    }
  }
  const ownFiles = [
    ...(plan.traces.fileDir !== undefined ? [join(plan.traces.fileDir, OUT_FILE_NAMES.traces)] : []),
    ...(plan.metrics.fileDir !== undefined ? [join(plan.metrics.fileDir, OUT_FILE_NAMES.metrics)] : []),
  ];
  const removed = await clearOwnFiles(ownFiles);
  if (removed.length > 0)
    progress(`starting from empty files: removed what an earlier run left: ${removed.join(', ')}`);
  const recorder = cmd.sessions !== undefined ? sessionRecorder() : undefined;
  const rows = await playScenarios(cmd, telemetry.runs, progress, recorder?.onLine);

  const report = await telemetry.shutdown(flushBoundMs(io.env, DEFAULT_DEMO_FLUSH_MS));
  const sessionFiles =
    recorder !== undefined && cmd.sessions !== undefined
      ? await writeSessions(cmd.sessions, recorder.sessions.values(), progress)
      : [];
  const wrote = {
    spans:
      plan.traces.fileDir !== undefined
        ? (await countFile(join(plan.traces.fileDir, OUT_FILE_NAMES.traces), 'traces')).items
        : undefined,
    metricLines:
      plan.metrics.fileDir !== undefined
        ? (await countFile(join(plan.metrics.fileDir, OUT_FILE_NAMES.metrics), 'metrics')).lines
        : undefined,
    sessionLogs: sessionFiles.length,
  };
  const dropped = report.dropped.traces + report.dropped.metrics;
  if (dropped > 0) {
    io.stderr.write(
      `subagent-otel demo: telemetry: ${report.dropped.traces} span(s) and ${report.dropped.metrics} metric batch(es) in all could not be delivered\n`,
    );
  }
  const exitCode = dropped > 0 ? 3 : 0;
  if (cmd.json) {
    io.stdout.write(
      `${JSON.stringify({ runs: rows.map((r) => ({ via: r.via, scenario: r.scenario, ...r.record })), destinations: telemetry.describeDestinations(), shutdown: report, wrote, sessionFiles }, null, 2)}\n`,
    );
    return exitCode;
  }
  printDemoText(cmd, io, { rows, telemetry, report, wrote, sessionFiles, dropped });
  return exitCode;
}

/**
 * Plays every scenario in turn, reporting runs to `target` and `progress`:
 * the SDK runtime's through the SDK backend (and one cancelled by the
 * parent), then through the stdio proxy on one runtime process (its lines
 * passed to `onLine`), then the ACP agent's through the ACP backend.
 * @returns the observed runs, each labelled with how and for which scenario
 *   it was produced, in the order they finished.
 */
async function playScenarios(
  cmd: DemoCommand,
  target: RunListener,
  progress: (what: string) => void,
  onLine: ((line: string) => void) | undefined,
): Promise<DemoRow[]> {
  const rows: DemoRow[] = [];
  let label: Pick<DemoRow, 'via' | 'scenario'> = { via: 'sdk-backend', scenario: '' };
  const listener = collecting(target, rows, () => label);
  const agentName = cmd.agentName !== undefined ? { agentName: cmd.agentName } : {};

  progress(`SDK backend: ${DEMO_SDK_SCENARIOS.length + 1} scenarios on the scripted runtime (embedded log generation)`);
  for (const scenario of DEMO_SDK_SCENARIOS) {
    label = { via: 'sdk-backend', scenario };
    await runSdkSubagent({
      command: process.execPath,
      args: [SDK_RUNTIME],
      ...ROUTE,
      ...agentName,
      prompt: `scenario:${scenario}`,
      listener,
    });
  }
  label = { via: 'sdk-backend', scenario: 'cancelled by parent' };
  const controller = new AbortController();
  await runSdkSubagent({
    command: process.execPath,
    args: [SDK_RUNTIME],
    ...ROUTE,
    ...agentName,
    prompt: 'scenario:hang',
    listener,
    signal: controller.signal,
    onFrame: abortOnFirstText(controller),
  });

  progress(`stdio proxy: ${DEMO_SDK_SCENARIOS.length} scenarios on one runtime process (chunk log generation)`);
  await throughProxy(
    listener,
    DEMO_SDK_SCENARIOS,
    (scenario) => {
      label = { via: 'sdk-proxy', scenario };
    },
    onLine,
  );

  progress(`ACP backend: ${DEMO_ACP_SCENARIOS.length} scenarios on the scripted ACP agent`);
  for (const scenario of DEMO_ACP_SCENARIOS) {
    label = { via: 'acp-backend', scenario };
    await runAcpSubagent({
      command: process.execPath,
      args: [ACP_AGENT],
      ...agentName,
      prompt: `scenario:${scenario}`,
      listener,
    });
  }
  return rows;
}

/** What the demo did, for {@link printDemoText}. */
interface DemoOutcome {
  readonly rows: readonly DemoRow[];
  readonly telemetry: Telemetry;
  readonly report: TelemetryShutdownReport;
  /** Spans and metric exports counted in the files written (undefined: not written to a file), session logs written. */
  readonly wrote: { readonly spans?: number; readonly metricLines?: number; readonly sessionLogs: number };
  readonly sessionFiles: readonly string[];
  /** Spans and metric batches that could not be delivered. */
  readonly dropped: number;
}

/**
 * Prints the demo's text output on `io.stdout`: the run table, the
 * truncation and mismatch counts, where the telemetry went and what was
 * written, the session logs, and how to send it to a collector or view it.
 */
function printDemoText(
  cmd: DemoCommand,
  io: { stdout: NodeJS.WritableStream; env: NodeJS.ProcessEnv },
  outcome: DemoOutcome,
): void {
  const { rows, telemetry, report, wrote, sessionFiles, dropped } = outcome;
  const truncated = rows.filter((r) => r.record.stopReason === 'max-tokens').length;
  const mismatches = rows.filter((r) => isOutputMismatch(r.record)).length;
  io.stdout.write(`\n${formatDemoTable(rows)}\n\n`);
  io.stdout.write(
    `${rows.length} runs observed: ${truncated} cut off at max-tokens (truncation rate ${((100 * truncated) / Math.max(rows.length, 1)).toFixed(0)}%), ${mismatches} where the runtime reported a different output than the rule selects.\n`,
  );
  io.stdout.write(
    'Runs cut off at max-tokens still report their partial text: the last non-empty message, else the streamed text.\n\n',
  );
  io.stdout.write(dropped > 0 ? 'Telemetry (incomplete, see stderr) sent to:\n' : 'Telemetry written to:\n');
  for (const d of telemetry.describeDestinations()) io.stdout.write(`  ${d}\n`);
  if (report.timedOut || report.errors.length > 0)
    io.stdout.write(`  (export problems: ${report.errors.join('; ') || 'flush timed out'})\n`);
  const counts = [
    ...(wrote.spans !== undefined ? [`${wrote.spans} spans to ${OUT_FILE_NAMES.traces}`] : []),
    ...(wrote.metricLines !== undefined
      ? [`${wrote.metricLines} metric export${wrote.metricLines === 1 ? '' : 's'} to ${OUT_FILE_NAMES.metrics}`]
      : []),
  ];
  if (counts.length > 0)
    io.stdout.write(`This run wrote ${counts.join(' and ')} (files from earlier runs are removed first).\n`);
  if (cmd.sessions !== undefined) {
    io.stdout.write(
      `Session logs of the ${sessionFiles.length} proxied sessions written to ${cmd.sessions}; replay them with: subagent-otel replay ${cmd.sessions}\n`,
    );
  }
  io.stdout.write(
    [
      '',
      'Send it to a collector: start the stack in collector-config/ (docker compose up) and either',
      '  - set OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 OTEL_EXPORTER_OTLP_PROTOCOL=http/json and run again, or',
      '  - let the collector ingest the files above with its otlp_json_file receiver (see collector-config/README.md).',
      '',
      ...(telemetry.outDir !== undefined
        ? [`See these runs on a local page: ${viewCommand(telemetry.outDir, io.env)}`, '']
        : []),
    ].join('\n'),
  );
}

/**
 * The `view` command that shows the runs just written: bare when they went
 * to the directory `view` reads by default (the same `SUBAGENT_OTEL_OUT` or
 * `./subagent-otel-out` of the working directory), else with the directory.
 */
export function viewCommand(outDir: string, env: NodeJS.ProcessEnv): string {
  const defaultDir = resolve(env[SETTINGS.out.env]?.trim() || SETTINGS.out.default);
  if (resolve(outDir) === defaultDir) return 'subagent-otel view';
  return `subagent-otel view ${/[\s'"$`\\]/.test(outDir) ? `'${outDir.replaceAll("'", "'\\''")}'` : outDir}`;
}
