/**
 * `proxy --agent-telemetry`, put together: before the agent is spawned, the
 * loopback receiver and the agent's environment pointing at it; once the
 * observation is built, the join (runs completed from the agent's reports)
 * in front of the run telemetry and the forwarder behind the receiver; at the
 * end, a bounded wait for the exited agent's last records, then every held
 * run released and the receiver closed. A signal, the end of the agent's
 * input and its exit each shorten the wait (`stopWaiting`, `inputEnded`,
 * `finish`): a run that ended is never kept back by a wait when the proxy
 * has to go (decision 0096). Loaded by
 * one dynamic `import()` only when the flag is given: without it nothing of
 * this runs and the agent's environment is the proxy's own.
 *
 * The wait per run is `SUBAGENT_OTEL_AGENT_TELEMETRY_WAIT_MS` (default
 * {@link DEFAULT_AGENT_TELEMETRY_WAIT_MS}, 0 to 600000).
 *
 * @module subagent-otel/proxy/agent-telemetry
 */
import { diag } from '@opentelemetry/api';
import { AgentTelemetryJoin, type ReleaseCause } from '../observe/agent-telemetry-join.js';
import { modelCallReports } from '../observe/agent-turn-reports.js';
import type { RunListener } from '../observe/run-record.js';
import {
  createAgentTelemetryForwarder,
  type AgentTelemetryForwarder,
  type RunSpanLookup,
} from '../telemetry/agent-telemetry-forward.js';
import type { RunTelemetry } from '../telemetry/run-telemetry.js';
import type { TelemetryOptions, TelemetryPlan } from '../telemetry/setup.js';
import type { OtlpJsonRequest } from '../wire/otlp-json.js';
import { agentTelemetryEnv } from './agent-telemetry-env.js';
import { startAgentTelemetryReceiver, type AgentTelemetryReceiver } from './agent-telemetry-receiver.js';

/**
 * Default longest wait, per run, for the agent's late batched records (ms):
 * twice gemini-cli 0.61's log batch delay (5 s, fixed: it ignores
 * `OTEL_BLRP_SCHEDULE_DELAY`).
 */
export const DEFAULT_AGENT_TELEMETRY_WAIT_MS = 10_000;
/**
 * After the end of the agent's input, the longest any held run still waits
 * (ms): agents flush their records when their input ends and they exit
 * (gemini-cli and Claude Code within about 50 ms of it, measured), so this
 * only bounds an agent that lingers; a signal or the agent's exit ends the
 * wait sooner.
 */
export const END_OF_INPUT_WAIT_MS = 2000;
/**
 * After the agent exited, the longest wait for its last records (ms): until
 * every connection it had to the receiver is closed and each request handled
 * (a process that exited has closed its sockets; Claude Code's last requests
 * are handled a few ms after its exit), bounded for a child of the agent that
 * keeps one open.
 */
export const AFTER_EXIT_WAIT_MS = 1000;
/** Environment variable of that wait. */
export const ENV_AGENT_TELEMETRY_WAIT_MS = 'SUBAGENT_OTEL_AGENT_TELEMETRY_WAIT_MS';
const MAX_WAIT_MS = 600_000;

/** The wait from the environment; a value that is not an integer in range is reported and the default used. */
export function agentTelemetryWaitMs(env: NodeJS.ProcessEnv, warn: (message: string) => void): number {
  const raw = env[ENV_AGENT_TELEMETRY_WAIT_MS];
  if (raw === undefined || raw.trim() === '') return DEFAULT_AGENT_TELEMETRY_WAIT_MS;
  const value = Number(raw.trim());
  if (Number.isInteger(value) && value >= 0 && value <= MAX_WAIT_MS) return value;
  warn(
    `${ENV_AGENT_TELEMETRY_WAIT_MS}=${JSON.stringify(raw)} is not a whole number of milliseconds from 0 to ${MAX_WAIT_MS}; using ${DEFAULT_AGENT_TELEMETRY_WAIT_MS}`,
  );
  return DEFAULT_AGENT_TELEMETRY_WAIT_MS;
}

/** A started agent-telemetry session of one proxy. */
export interface AgentTelemetry {
  /** The environment to spawn the agent with. */
  readonly childEnv: NodeJS.ProcessEnv;
  /** The wait per run (ms). */
  readonly waitMs: number;
  /**
   * Puts the join in front of `runs` and starts forwarding to the
   * destinations of `plan` (the proxy's own `planTelemetry(options)`, not
   * planned again). @returns the listener to give the tracker.
   */
  attach(runs: RunTelemetry, options: TelemetryOptions, plan: TelemetryPlan): RunListener;
  /**
   * The agent's input ended: from now on no run waits more than
   * {@link END_OF_INPUT_WAIT_MS} (`onReleased` is called after each run
   * that shortened wait released). Idempotent.
   */
  inputEnded(): void;
  /**
   * The proxy was signalled: every held run is passed on now with what
   * arrived, and runs that end later are not held. @returns how many were
   * released. Idempotent.
   */
  stopWaiting(): number;
  /**
   * Called once the agent exited: waits for its last records (at most
   * {@link AFTER_EXIT_WAIT_MS}), releases every run still held, flushes
   * forwarding, closes the receiver; logs a summary. Never rejects.
   */
  finish(): Promise<void>;
}

/**
 * Starts the receiver (127.0.0.1, a free port) and computes the agent's
 * environment. Requests that arrive before `attach` are kept (bounded) and
 * handled then.
 */
export async function startAgentTelemetry(
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
  onReleased: () => void = () => undefined,
): Promise<AgentTelemetry> {
  const waitMs = agentTelemetryWaitMs(env, warn);
  let handle: ((request: OtlpJsonRequest) => void) | undefined;
  const early: OtlpJsonRequest[] = [];
  const receiver: AgentTelemetryReceiver = await startAgentTelemetryReceiver((request) => {
    if (handle !== undefined) handle(request);
    else if (early.length < 256) early.push(request);
  });
  let join: AgentTelemetryJoin | undefined;
  let forwarder: AgentTelemetryForwarder | undefined;
  /** Set before `attach` when a signal came that early: the join is built final. */
  let stopped = false;
  let inputHasEnded = false;
  return {
    childEnv: agentTelemetryEnv(env, receiver.origin, receiver.otlpHeaders),
    waitMs,
    attach(runs, options, plan) {
      const joined = new AgentTelemetryJoin(runs, waitMs);
      const forward = createAgentTelemetryForwarder({
        traces: plan.traces,
        metrics: plan.metrics,
        env: options.env ?? env,
      });
      join = joined;
      forwarder = forward;
      const lookup: RunSpanLookup = (time, sessionId) => {
        const run = joined.runAt(time, sessionId);
        const context = run !== undefined ? runs.spanContextOf(run.runId) : undefined;
        return context !== undefined ? { traceId: context.traceId, spanId: context.spanId } : undefined;
      };
      handle = (request) => {
        if (request.signal === 'logs') joined.addReports(modelCallReports(request.body));
        forward.send(request, lookup);
      };
      for (const request of early.splice(0)) handle(request);
      if (inputHasEnded) joined.capWait(END_OF_INPUT_WAIT_MS, onReleased);
      if (stopped) joined.releaseAll('signal', true);
      return joined;
    },
    inputEnded() {
      inputHasEnded = true;
      join?.capWait(END_OF_INPUT_WAIT_MS, onReleased);
    },
    stopWaiting() {
      stopped = true;
      return join?.releaseAll('signal', true) ?? 0;
    },
    async finish() {
      if (join !== undefined && join.heldCount > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          receiver.idle(),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, AFTER_EXIT_WAIT_MS))),
        ]);
        clearTimeout(timer);
      }
      join?.releaseAll('agent-exit', true);
      await forwarder?.flush(2000);
      await receiver.close();
      const { taken, refused, unauthorized, firstRefusal } = receiver.stats;
      const counts = join?.counts ?? { joined: 0, none: 0 };
      const f = forwarder?.stats;
      diag.info(
        `subagent-otel: agent telemetry: took ${taken.traces} trace, ${taken.logs} log and ${taken.metrics} metric request(s)` +
          `${refused > 0 ? `, refused ${refused}${unauthorized > 0 ? ` (${unauthorized} without the token)` : ''} (first: ${firstRefusal ?? '?'})` : ''}; runs joined ${counts.joined}, from the wire alone ${counts.none}` +
          `${join !== undefined ? `; held runs released: ${releaseSummary(join.released)}` : ''}` +
          `${f !== undefined ? `; forwarded ${f.forwarded}, failed ${f.failed}${f.firstFailure !== undefined ? ` (first: ${f.firstFailure})` : ''}, spans moved under runs ${f.spansMoved}, left ${f.spansLeft}` : ''}`,
      );
    },
  };
}

/** `answered 3, agent-exit 1`, or `none`: the causes that released any run. */
function releaseSummary(released: Readonly<Record<ReleaseCause, number>>): string {
  const parts = Object.entries(released)
    .filter(([, n]) => n > 0)
    .map(([cause, n]) => `${cause} ${n}`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}
