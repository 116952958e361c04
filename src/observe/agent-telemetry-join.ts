/**
 * A `RunListener` between the ACP tracker and telemetry for `proxy
 * --agent-telemetry`: passes run starts on at once and holds each ACP run's
 * end until the agent's own telemetry about it came, then completes it
 * (`completeRun`) and passes it on. Agents batch their records and send them
 * after the turn's answer, so a run is held until a main-loop model-call
 * report of its own arrived that is later than its last tool call (the
 * turn's final answer). A report is the run's own when its time is after the
 * end of the session's previous run and not after the run's own end
 * (`ownerOfReport`): consecutive turns of a session are milliseconds apart,
 * and a late record of one turn must neither release nor complete the next.
 * A run is held at most `waitMs` (then it is reported
 * from the wire alone, `agentTelemetry: 'none'`). An agent that sent no report at all
 * during a whole wait is taken to send none (codex-acp 2.6): every run held
 * then is released with it, and later runs pass at once, marked `none`,
 * until a report comes. `capWait` shortens every wait (the end of the
 * agent's input); `releaseAll` ends them at once (a signal, the agent's
 * exit) and, when final, stops holding: nothing that ended is kept back
 * once the proxy has to go. Runs of other sources
 * pass through.
 * Also keeps, per session, the recent runs' windows, for re-parenting the
 * agent's spans.
 *
 * Owns its timers and a bounded report buffer ({@link MAX_REPORTS}).
 *
 * @module subagent-otel/observe/agent-telemetry-join
 */
import { completeRun, reportsOfRun, type AgentModelCallReport } from './agent-turn-reports.js';
import type { RunListener, RunRecord, RunStart } from './run-record.js';

/** Reports kept for joining (oldest dropped first). */
export const MAX_REPORTS = 4096;
/** Run windows kept for re-parenting (oldest dropped first). */
const MAX_WINDOWS = 4096;
/**
 * Slack on a run's window when placing agent records: the proxy stamps a
 * prompt when it observes it, after forwarding it, so the agent's first span
 * may start a little before the run does.
 */
export const RUN_WINDOW_SLACK_MS = 250;

/** A run's place in time, for finding the run an agent span belongs to. */
export interface RunWindow {
  readonly runId: string;
  readonly sessionId: string | undefined;
  readonly startTime: number;
  endTime?: number;
}

/** Why a held run was passed on. */
export type ReleaseCause = 'answered' | 'wait' | 'silent' | 'end-of-input' | 'agent-exit' | 'signal';

interface Held {
  readonly record: RunRecord;
  timer: NodeJS.Timeout;
  /** When the wait ends (epoch ms). */
  deadline: number;
}

export class AgentTelemetryJoin implements RunListener {
  readonly #target: RunListener;
  #waitMs: number;
  /** Set by `capWait`: waits end early, and say so. */
  #capped: { readonly onReleased: () => void } | undefined;
  readonly #reports: AgentModelCallReport[] = [];
  readonly #held = new Map<string, Held>();
  readonly #windows: RunWindow[] = [];
  /** Whether any model-call report came; if not, and a whole wait passed, runs are no longer held. */
  #reportsSeen = false;
  #holding = true;
  /** Set by a final `releaseAll`: no run is held any more, whatever comes. */
  #final = false;
  /** Runs passed on: joined with reports, or from the wire alone. */
  readonly counts = { joined: 0, none: 0 };
  /** Held runs passed on, by why they were released (runs never held are not counted). */
  readonly released: Record<ReleaseCause, number> = {
    answered: 0,
    wait: 0,
    silent: 0,
    'end-of-input': 0,
    'agent-exit': 0,
    signal: 0,
  };

  /**
   * @param target the listener that builds spans and metrics.
   * @param waitMs longest hold of a run's end for its reports (>= 0).
   */
  constructor(target: RunListener, waitMs: number) {
    this.#target = target;
    this.#waitMs = waitMs;
  }

  onRunStart(start: RunStart): void {
    this.#windows.push({ runId: start.runId, sessionId: start.sessionId, startTime: start.startTime });
    if (this.#windows.length > MAX_WINDOWS) this.#windows.shift();
    this.#target.onRunStart(start);
  }

  onRunEnd(record: RunRecord): void {
    const window = this.#windows.find((w) => w.runId === record.runId);
    if (window !== undefined) window.endTime = record.endTime;
    if (record.source !== 'acp' || record.sessionId === undefined || this.#held.has(record.runId)) {
      this.#target.onRunEnd(record);
      return;
    }
    if (!this.#holding || this.#final) {
      const { record: completed, join } = completeRun(record, this.#reports, this.#sessionWindows(record.sessionId));
      this.counts[join] += 1;
      this.#target.onRunEnd(completed);
      return;
    }
    // Cleared on release; every run still held is released when the proxy finishes (`releaseAll`).
    const capped = this.#capped !== undefined;
    const timer = setTimeout(() => this.#timedOut(record.runId, capped), this.#waitMs);
    this.#held.set(record.runId, { record, timer, deadline: Date.now() + this.#waitMs });
    if (this.#answered(record)) this.#release(record.runId, 'answered');
  }

  onMalformed(origin: string, error: { readonly code: string; readonly message: string }): void {
    this.#target.onMalformed?.(origin, error);
  }

  /** Takes the model-call reports of one request and releases the runs they complete. */
  addReports(reports: readonly AgentModelCallReport[]): void {
    if (reports.length === 0) return;
    this.#reportsSeen = true;
    this.#holding = true;
    this.#reports.push(...reports);
    if (this.#reports.length > MAX_REPORTS) this.#reports.splice(0, this.#reports.length - MAX_REPORTS);
    for (const [runId, held] of [...this.#held]) if (this.#answered(held.record)) this.#release(runId, 'answered');
  }

  /**
   * Passes every held run on now, completed from the reports that arrived
   * (`none` where none did). With `final`, runs that end later pass at once
   * too (joined with what is there): used when the proxy must go (a signal,
   * the agent's exit once its records are in). Idempotent.
   * @returns how many runs were released.
   */
  releaseAll(cause: 'agent-exit' | 'signal', final: boolean): number {
    if (final) this.#final = true;
    const runIds = [...this.#held.keys()];
    for (const runId of runIds) this.#release(runId, cause);
    return runIds.length;
  }

  /**
   * No run waits more than `ms` from now on: held runs whose wait ends later
   * are released at `now + ms`, later runs wait at most `ms`; each such early
   * release is cause `end-of-input` and is followed by `onReleased`. Never
   * lengthens a wait.
   */
  capWait(ms: number, onReleased: () => void): void {
    this.#capped = { onReleased };
    this.#waitMs = Math.min(this.#waitMs, ms);
    const deadline = Date.now() + ms;
    for (const [runId, held] of this.#held) {
      if (held.deadline <= deadline) continue;
      clearTimeout(held.timer);
      held.deadline = deadline;
      held.timer = setTimeout(() => this.#timedOut(runId, true), ms);
    }
  }

  /** How many runs are held right now. */
  get heldCount(): number {
    return this.#held.size;
  }

  /**
   * The run an agent record at `time` of `sessionId` (when known) belongs
   * to: the latest-started one whose window, widened by
   * {@link RUN_WINDOW_SLACK_MS}, holds it.
   */
  runAt(time: number, sessionId: string | undefined): RunWindow | undefined {
    for (let i = this.#windows.length - 1; i >= 0; i -= 1) {
      const w = this.#windows[i]!;
      if (sessionId !== undefined && w.sessionId !== sessionId) continue;
      if (
        time >= w.startTime - RUN_WINDOW_SLACK_MS &&
        (w.endTime === undefined || time <= w.endTime + RUN_WINDOW_SLACK_MS)
      )
        return w;
    }
    return undefined;
  }

  /** The kept windows of one session's runs, for giving each report to its own run. */
  #sessionWindows(sessionId: string | undefined): RunWindow[] {
    return this.#windows.filter((w) => w.sessionId === sessionId);
  }

  /**
   * Whether the reports hold the turn's final model call: a main one of the run's own, after its last tool call
   * when it made any. Not compared with the run's start: that stamp may be later than the turn's first call.
   */
  #answered(record: RunRecord): boolean {
    const mine = reportsOfRun(record, this.#reports, this.#sessionWindows(record.sessionId));
    const last = mine.at(-1);
    if (last === undefined) return false;
    return record.toolCalls.every((t) => last.time >= (t.endTime ?? t.startTime));
  }

  /**
   * A run's wait is over. A wait `capWait` shortened says nothing about the agent. Without any report during a whole
   * wait the agent is taken to send none: every held run goes.
   */
  #timedOut(runId: string, shortened: boolean): void {
    if (shortened && this.#capped !== undefined) {
      // A shortened wait says nothing about whether the agent reports.
      this.#release(runId, 'end-of-input');
      this.#capped.onReleased();
      return;
    }
    if (this.#reportsSeen) {
      this.#release(runId, 'wait');
      return;
    }
    this.#holding = false;
    this.#release(runId, 'wait');
    for (const other of [...this.#held.keys()]) this.#release(other, 'silent');
  }

  #release(runId: string, cause: ReleaseCause): void {
    const held = this.#held.get(runId);
    if (held === undefined) return;
    this.released[cause] += 1;
    this.#held.delete(runId);
    clearTimeout(held.timer);
    const { record, join } = completeRun(held.record, this.#reports, this.#sessionWindows(held.record.sessionId));
    this.counts[join] += 1;
    this.#target.onRunEnd(record);
  }
}
