/**
 * `subagent-otel demo`, the main job: runs the bundled keyless scripted SDK
 * runtime through every scenario twice — through the SDK backend (embedded
 * log generation) and through the stdio proxy (chunk log generation) — and
 * the scripted ACP agent through the ACP backend, sends the telemetry to the
 * configured destination (the embedded OTLP-JSON-lines files by default), and
 * prints one row per observed run. Owns only orchestration and presentation:
 * every run goes through the same backends, proxy bridge and trackers that
 * users attach to their own agents.
 *
 * @module subagent-otel/cli/commands/demo
 */
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { JsonRpcFrame } from '../../wire/jsonrpc.js';
import { runAcpSubagent } from '../../backend/acp-backend.js';
import { runSdkSubagent } from '../../backend/sdk-backend.js';
import type { RunListener, RunRecord } from '../../observe/run-record.js';
import { createTelemetry } from '../../telemetry/setup.js';
import type { Command } from '../args.js';
import { runStdioProxy } from '../stdio-proxy.js';
import { formatRunTable } from '../summary.js';
import { checkOutputDirectory } from '../output-paths.js';
import { flushBoundMs, installDiagnostics, telemetryOptions } from '../telemetry-options.js';
import { isOutputMismatch } from '../../replay/replay.js';
import { observeConversation } from './proxy-observation.js';

export type DemoCommand = Extract<Command, { name: 'demo' }>;

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
export const DEMO_ACP_SCENARIOS = ['end_turn', 'max-tokens', 'refusal', 'max_turn_requests', 'non-text-only', 'thoughts', 'permission'] as const;

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

/** Drives one runtime process through the in-process proxy bridge, one scenario per prompt. */
async function throughProxy(listener: RunListener, scenarios: readonly string[], onScenario: (s: string) => void): Promise<void> {
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
  let buffered = '';
  fromChild.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
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
    await request('session/prompt', { sessionId: `proxy-${scenario}`, contentBlocks: [{ type: 'text', text: `scenario:${scenario}` }] });
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
          return [row?.via ?? '', record.source === 'sdk-subagent' ? `${row?.scenario ?? ''} (child)` : (row?.scenario ?? '')];
        },
      },
    },
  );
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
  const telemetry = createTelemetry(telemetryOptions(cmd, io.env));
  if (telemetry.outDir !== undefined) {
    const unusable = await checkOutputDirectory(telemetry.outDir);
    if (unusable !== undefined) {
      io.stderr.write(`subagent-otel demo: output directory ${telemetry.outDir}: ${unusable}\n`);
      await telemetry.shutdown(0);
      return 2;
    }
  }
  const rows: DemoRow[] = [];
  let label: Pick<DemoRow, 'via' | 'scenario'> = { via: 'sdk-backend', scenario: '' };
  const listener = collecting(telemetry.runs, rows, () => label);
  const agentName = cmd.agentName !== undefined ? { agentName: cmd.agentName } : {};
  const progress = (what: string): void => void io.stderr.write(`demo: ${what}\n`);

  progress(`SDK backend: ${DEMO_SDK_SCENARIOS.length + 1} scenarios on the scripted runtime (embedded log generation)`);
  for (const scenario of DEMO_SDK_SCENARIOS) {
    label = { via: 'sdk-backend', scenario };
    await runSdkSubagent({ command: process.execPath, args: [SDK_RUNTIME], ...ROUTE, ...agentName, prompt: `scenario:${scenario}`, listener });
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
  await throughProxy(listener, DEMO_SDK_SCENARIOS, (scenario) => {
    label = { via: 'sdk-proxy', scenario };
  });

  progress(`ACP backend: ${DEMO_ACP_SCENARIOS.length} scenarios on the scripted ACP agent`);
  for (const scenario of DEMO_ACP_SCENARIOS) {
    label = { via: 'acp-backend', scenario };
    await runAcpSubagent({ command: process.execPath, args: [ACP_AGENT], ...agentName, prompt: `scenario:${scenario}`, listener });
  }

  const report = await telemetry.shutdown(flushBoundMs(io.env, DEFAULT_DEMO_FLUSH_MS));
  const dropped = report.dropped.traces + report.dropped.metrics;
  if (dropped > 0) {
    io.stderr.write(`subagent-otel demo: telemetry: ${report.dropped.traces} span(s) and ${report.dropped.metrics} metric batch(es) in all could not be delivered\n`);
  }
  const exitCode = dropped > 0 ? 3 : 0;
  const truncated = rows.filter((r) => r.record.stopReason === 'max-tokens').length;
  const mismatches = rows.filter((r) => isOutputMismatch(r.record)).length;
  if (cmd.json) {
    io.stdout.write(`${JSON.stringify({ runs: rows.map((r) => ({ via: r.via, scenario: r.scenario, ...r.record })), destinations: telemetry.describeDestinations(), shutdown: report }, null, 2)}\n`);
    return exitCode;
  }
  io.stdout.write(`\n${formatDemoTable(rows)}\n\n`);
  io.stdout.write(`${rows.length} runs observed: ${truncated} cut off at max-tokens (truncation rate ${((100 * truncated) / Math.max(rows.length, 1)).toFixed(0)}%), ${mismatches} where the runtime reported a different output than the rule selects.\n`);
  io.stdout.write('Runs cut off at max-tokens still report their partial text: the last non-empty message, else the streamed text.\n\n');
  io.stdout.write(dropped > 0 ? 'Telemetry (incomplete, see stderr) sent to:\n' : 'Telemetry written to:\n');
  for (const d of telemetry.describeDestinations()) io.stdout.write(`  ${d}\n`);
  if (report.timedOut || report.errors.length > 0) io.stdout.write(`  (export problems: ${report.errors.join('; ') || 'flush timed out'})\n`);
  io.stdout.write(
    [
      '',
      'Send it to a collector: start the stack in collector-config/ (docker compose up) and either',
      '  - set OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 OTEL_EXPORTER_OTLP_PROTOCOL=http/json and run again, or',
      '  - let the collector ingest the files above with its otlpjsonfile receiver (see collector-config/README.md).',
      '',
    ].join('\n'),
  );
  return exitCode;
}
