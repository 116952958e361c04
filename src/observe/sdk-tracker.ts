/**
 * Run tracking for the dsh SDK runtime protocol. Groups frames of both
 * directions into runs (docs/decisions 0010): a prompt run on an SDK session,
 * and an in-runtime subagent (from `subagent.started` to `subagent.finished`,
 * its events arriving as `session.event` with the child's session id). Each
 * run is accumulated by a `RunBuilder` and reported to a `RunListener`. Also
 * offers the in-process attach: a callback usable as the SDK client's
 * `onNotification`.
 *
 * A prompt run is framed as upstream's SDK client frames it, whenever the
 * `session/prompt` answer arrives (the real runtime answers on queueing,
 * before the turn runs): it opens at the prompt request (in process, where
 * no request is seen: at the inbox receipt or `turn/start`), folds the
 * session's events from the inbox receipt of its message (or, without
 * receipts, from `turn/start`), and closes at the session's
 * `session.status idle`; a session that never reported a status closes at
 * `turn/end` instead. A prompt answered with an error or without a
 * `messageId` ends its run as `error` with no output, as upstream's client
 * never starts collecting then. An event upstream's client rejects (not an
 * event object; an `assistant/message` without a content array) ends the
 * run as `error` with the output folded so far. Stop reason: upstream's SDK
 * rule over the run's last `turn/end` (`output/stop-reason`). No run gets a
 * diagnostic: upstream's SDK backend sets none.
 *
 * Never throws on bad input: a frame whose params fail validation is reported
 * through `onMalformed` and skipped.
 *
 * @module subagent-otel/observe/sdk-tracker
 */
import { randomUUID } from 'node:crypto';
import type { DeltaLine } from '../wire/delta-line.js';
import type { JsonRpcFrame } from '../wire/jsonrpc.js';
import type { ContentBlock } from '../wire/content.js';
import {
  isReceipt,
  parseInitializeParams,
  parsePromptParams,
  parsePromptResult,
  parseSdkNotification,
  SDK_NOTIFICATIONS,
  SDK_REQUESTS,
  type SubagentFinishedParams,
  upstreamRejectsEvent,
} from '../wire/sdk-protocol.js';
import { isKnownEvent, type SessionEvent } from '../wire/events.js';
import type { WireError } from '../wire/wire-error.js';
import { sdkStopReason } from '../output/stop-reason.js';
import type { Direction, FrameObserver } from './frame-observer.js';
import { RunBuilder, guardListener } from './run-builder.js';
import type { RunListener, RunSource } from './run-record.js';

/**
 * How many sessions' last closed runs the tracker remembers for children that
 * start after their parent's run closed. The same bound as the closed runs
 * whose span context run telemetry keeps (`telemetry/run-telemetry.ts`):
 * a child of a run forgotten there could not nest under its span anyway.
 */
export const REMEMBERED_CLOSED_SESSIONS = 1024;

/** Options of `SdkTracker`. */
export interface SdkTrackerOptions {
  /** Label for `gen_ai.agent.name`; default: the provider from `initialize`, else `dsh`. */
  readonly agentName?: string;
  /** W3C trace context that parents top-level runs (e.g. the proxy's `TRACEPARENT`). */
  readonly traceparent?: string;
  readonly tracestate?: string;
  /** Run id factory. Default `crypto.randomUUID`. */
  readonly newRunId?: () => string;
}

interface OpenRun {
  builder: RunBuilder;
  readonly source: RunSource;
  /** Set once the turn has ended; prompt turns close right away, subagents wait for `subagent.finished`. */
  turnEnded: boolean;
  /** The `session/prompt` request whose arrival opened the run, if one did; only its answer may close the run. */
  promptId?: string | number;
  /** Events are folded: the inbox receipt (or, without one, `turn/start`) has been seen. */
  collecting: boolean;
}

/**
 * Tracks SDK runtime traffic. Feed it frames with `observeFrame` (proxy,
 * backend, replay of a capture) or notifications with `onNotification`
 * (in-process attach). Runs are reported to the listener as they open and
 * close; `close()` ends every open run as `error`.
 */
export class SdkTracker implements FrameObserver {
  readonly #listener: RunListener;
  readonly #options: SdkTrackerOptions;
  #provider: string | undefined;
  #model: string | undefined;
  readonly #runs = new Map<string, OpenRun>();
  /** childSessionId -> parentSessionId, from `subagent.started`. */
  readonly #children = new Map<string, string>();
  /** Unanswered `session/prompt` request ids -> session id. */
  readonly #prompts = new Map<string | number, string>();
  /** Per session, prompts queued behind a running turn, oldest first: the next run of the session belongs to the first. */
  readonly #queued = new Map<string, Array<string | number>>();
  /** Sessions that reported a `session.status`: their runs close at `idle`, not at `turn/end`. */
  readonly #reportsStatus = new Set<string>();
  /**
   * Per session, the id of its last closed run: a child started after its parent's run closed still nests under it.
   * The most recent `REMEMBERED_CLOSED_SESSIONS` sessions only (oldest forgotten first), so many sessions do not grow memory.
   */
  readonly #lastRun = new Map<string, string>();
  #closed = false;

  constructor(listener: RunListener, options: SdkTrackerOptions = {}) {
    this.#listener = guardListener(listener);
    this.#options = options;
  }

  /** Number of runs currently open. */
  get openRuns(): number {
    return this.#runs.size;
  }

  /** {@inheritDoc FrameObserver.observeFrame} */
  observeFrame(direction: Direction, frame: JsonRpcFrame, time: number): void {
    if (this.#closed) return;
    if (direction === 'client->agent') {
      if (frame.kind !== 'request') return;
      if (frame.method === SDK_REQUESTS.initialize) this.#onInitialize(frame.params);
      else if (frame.method === SDK_REQUESTS.prompt) this.#onPrompt(frame.id, frame.params, time);
      return;
    }
    if (frame.kind === 'notification') this.#onNotification(frame.method, frame.params, time);
    else if (frame.kind === 'response' && frame.id !== null)
      this.#onResponse(frame.id, frame.error, frame.result, time);
  }

  /**
   * {@inheritDoc FrameObserver.observeDelta}
   * What `observeFrame` does with such a frame, without building it: a delta
   * is always a valid `assistant/chunk` event, it never opens or closes a
   * run, and it is folded only into a run of its session that is collecting
   * events. Its text is decoded only while the run's streamed text can still
   * become its output (`RunBuilder.pushDelta`).
   */
  observeDelta(direction: Direction, delta: DeltaLine, _time: number): void {
    if (this.#closed || direction !== 'agent->client') return;
    const run = this.#runs.get(delta.sessionId);
    if (run === undefined || !run.collecting) return;
    run.builder.pushDelta(delta);
  }

  /**
   * The in-process attach: pass a runtime notification as it arrives.
   * Accepts `(method, params)` or one `{ method, params }` object, so it can
   * be handed directly to upstream's `DeepSeekHarness.run(input, { onNotification })`
   * or `HarnessSession.run(...)`. Never throws.
   */
  onNotification(
    methodOrNotification: string | { readonly method: string; readonly params?: unknown },
    params?: unknown,
  ): void {
    if (this.#closed) return;
    if (typeof methodOrNotification === 'string') this.#onNotification(methodOrNotification, params, Date.now());
    else this.#onNotification(methodOrNotification.method, methodOrNotification.params, Date.now());
  }

  /**
   * {@inheritDoc FrameObserver.close}
   * Every open run ends as `error` (a subagent whose turn already ended keeps
   * its turn's SDK-rule reason); `diagnostic` is accepted for the observer
   * contract but not recorded: upstream's SDK backend sets no diagnostic.
   */
  close(time: number, _diagnostic?: string): void {
    if (this.#closed) return;
    // Children first, so each subagent closes before the turn that started it.
    const entries = [...this.#runs.entries()].reverse();
    for (const [sessionId, run] of entries) {
      this.#runs.delete(sessionId);
      const stopReason = run.turnEnded && run.source === 'sdk-subagent' ? sdkStopReason(run.builder.turnEnd) : 'error';
      this.#emitEnd(sessionId, run, { endTime: time, stopReason });
    }
    this.#closed = true;
  }

  #onInitialize(params: unknown): void {
    const parsed = parseInitializeParams(params);
    if (!parsed.ok) return this.#malformed(parsed.error);
    this.#provider = parsed.value.provider;
    this.#model = parsed.value.model;
  }

  #onPrompt(id: string | number, params: unknown, time: number): void {
    const parsed = parsePromptParams(params);
    if (!parsed.ok) return this.#malformed(parsed.error);
    const sessionId = parsed.value.sessionId;
    this.#prompts.set(id, sessionId);
    if (!this.#runs.has(sessionId)) {
      this.#open(sessionId, 'sdk', time, false, parsed.value.contentBlocks).promptId = id;
      return;
    }
    const queue = this.#queued.get(sessionId);
    if (queue === undefined) this.#queued.set(sessionId, [id]);
    else queue.push(id);
  }

  #onResponse(
    id: string | number,
    error: { readonly message: string } | undefined,
    result: unknown,
    time: number,
  ): void {
    const sessionId = this.#prompts.get(id);
    if (sessionId === undefined) return;
    this.#prompts.delete(id);
    // The real runtime answers on queueing: a `{ messageId }` answer says nothing about the run's end.
    if (error === undefined && parsePromptResult(result).ok) return;
    this.#unqueue(sessionId, id);
    const run = this.#runs.get(sessionId);
    // Only the answer of the prompt a run belongs to can close it.
    if (run === undefined || run.source !== 'sdk' || run.promptId !== id) return;
    // Upstream's client rejects the prompt and never collects the run's events: error, no output.
    this.#runs.delete(sessionId);
    run.builder = new RunBuilder(run.builder.start);
    this.#emitEnd(sessionId, run, { endTime: time, stopReason: 'error' });
  }

  #onNotification(method: string, params: unknown, time: number): void {
    const parsed = parseSdkNotification(method, params);
    if (!parsed.ok) {
      this.#malformed(parsed.error);
      if (method === SDK_NOTIFICATIONS.sessionEvent) this.#onRejectedEvent(params, time);
      return;
    }
    if (!parsed.known) return;
    const n = parsed.notification;
    switch (n.method) {
      case SDK_NOTIFICATIONS.sessionEvent:
        this.#onEvent(n.params.sessionId, n.params.event, time);
        return;
      case SDK_NOTIFICATIONS.sessionStatus:
        this.#onStatus(n.params.sessionId, n.params.status, time);
        return;
      case SDK_NOTIFICATIONS.subagentStarted:
        this.#children.set(n.params.childSessionId, n.params.parentSessionId);
        if (!this.#runs.has(n.params.childSessionId)) this.#open(n.params.childSessionId, 'sdk-subagent', time, true);
        return;
      case SDK_NOTIFICATIONS.subagentFinished:
        this.#onSubagentFinished(n.params, time);
        return;
      default:
        return;
    }
  }

  /** A `session.event` that failed validation: when upstream's client would reject it too, the run of its session ends. */
  #onRejectedEvent(params: unknown, time: number): void {
    const sessionId = sessionIdOf(params);
    if (sessionId === undefined) return;
    const run = this.#runs.get(sessionId);
    if (run === undefined || run.source !== 'sdk' || !run.collecting) return;
    if (!upstreamRejectsEvent((params as { event?: unknown }).event)) return;
    this.#runs.delete(sessionId);
    this.#emitEnd(sessionId, run, { endTime: time, stopReason: 'error' });
  }

  #onStatus(sessionId: string, status: string, time: number): void {
    if (this.#children.has(sessionId)) return; // subagent runs end at `subagent.finished`
    this.#reportsStatus.add(sessionId);
    if (status !== 'idle') return;
    const run = this.#runs.get(sessionId);
    if (run === undefined || run.source !== 'sdk' || !run.collecting) return;
    this.#runs.delete(sessionId);
    this.#emitEnd(sessionId, run, { endTime: time, stopReason: sdkStopReason(run.builder.turnEnd) });
  }

  #onEvent(sessionId: string, event: SessionEvent, frameTime: number): void {
    const time = event.time ?? frameTime;
    const isChild = this.#children.has(sessionId);
    let run = this.#runs.get(sessionId);
    const opensRun = event.type === 'turn/start' || (!isChild && isReceipt(event));
    if (
      run !== undefined &&
      run.source === 'sdk' &&
      run.turnEnded &&
      event.type === 'turn/start' &&
      this.#queued.has(sessionId)
    ) {
      // A queued prompt's turn follows in the same busy period: the finished turn's run ends here.
      this.#runs.delete(sessionId);
      this.#emitEnd(sessionId, run, {
        endTime: run.builder.turnEndTime ?? time,
        stopReason: sdkStopReason(run.builder.turnEnd),
      });
      run = undefined;
    }
    if (run === undefined) {
      // Events outside a run (idle-time bookkeeping) are not output; a receipt or turn/start opens one.
      if (!opensRun) return;
      run = this.#open(sessionId, isChild ? 'sdk-subagent' : 'sdk', time, true);
      const promptId = this.#queued.get(sessionId)?.[0];
      if (promptId !== undefined) {
        run.promptId = promptId;
        this.#unqueue(sessionId, promptId);
      }
    } else if (!run.collecting) {
      // Events before the run's inbox receipt belong to earlier activity of the session.
      if (!opensRun) return;
      run.collecting = true;
    }
    if (event.type === 'session/end-seed') {
      // Everything before the seed marker was inherited: restart the run's accumulation from here.
      const fresh = new RunBuilder(run.builder.start);
      fresh.setRoute(this.#provider, this.#model);
      run.builder = fresh;
      run.turnEnded = false;
      return;
    }
    run.builder.pushEvent(event, time);
    if (isKnownEvent(event) && event.type === 'turn/end') {
      run.turnEnded = true;
      if (run.source === 'sdk' && !this.#reportsStatus.has(sessionId)) {
        // No status reports from this runtime: the turn's end is the run's end.
        this.#runs.delete(sessionId);
        this.#emitEnd(sessionId, run, { endTime: time, stopReason: sdkStopReason(event.data.reason) });
      }
    }
  }

  #unqueue(sessionId: string, id: string | number): void {
    const queue = this.#queued.get(sessionId);
    if (queue === undefined) return;
    const at = queue.indexOf(id);
    if (at !== -1) queue.splice(at, 1);
    if (queue.length === 0) this.#queued.delete(sessionId);
  }

  #onSubagentFinished(params: SubagentFinishedParams, time: number): void {
    const childId = params.childSessionId;
    let run = this.#runs.get(childId);
    if (run === undefined) {
      // Finished without a visible start (attached mid-run): still report it, with what is known.
      this.#children.set(childId, params.parentSessionId);
      run = this.#open(childId, 'sdk-subagent', time, true);
    }
    this.#runs.delete(childId);
    this.#children.delete(childId);
    const endTime = Math.max(run.builder.lastTime, time);
    // The runtime's stop reason is what the parent received; `provider` names the subagent provider, not the model's.
    this.#emitEnd(
      childId,
      run,
      {
        endTime,
        stopReason: params.stopReason,
        agentName: this.#options.agentName ?? params.provider,
        reported: { output: params.lastAssistantMessage },
      },
      params.provider,
    );
  }

  #open(
    sessionId: string,
    source: RunSource,
    time: number,
    collecting: boolean,
    prompt?: readonly ContentBlock[],
  ): OpenRun {
    const parentSessionId = this.#children.get(sessionId);
    const parentRun = parentSessionId !== undefined ? this.#runs.get(parentSessionId) : undefined;
    // A child started after its parent's run closed (upstream's scripted runtime starts it after `turn/end`) still nests under that run.
    const parentRunId =
      parentRun?.builder.start.runId ??
      (parentSessionId !== undefined ? this.#lastRun.get(parentSessionId) : undefined);
    const agentName = this.#options.agentName ?? this.#provider ?? 'dsh';
    const builder = new RunBuilder({
      runId: (this.#options.newRunId ?? randomUUID)(),
      source,
      agentName,
      sessionId,
      ...(parentSessionId !== undefined ? { parentSessionId } : {}),
      ...(parentRunId !== undefined ? { parentRunId } : {}),
      ...(parentRunId === undefined && this.#options.traceparent !== undefined
        ? { traceparent: this.#options.traceparent }
        : {}),
      ...(parentRunId === undefined && this.#options.tracestate !== undefined
        ? { tracestate: this.#options.tracestate }
        : {}),
      startTime: time,
      ...(source === 'sdk-subagent' ? { inProcess: true } : {}),
      ...(this.#provider !== undefined ? { provider: this.#provider } : {}),
      ...(this.#model !== undefined ? { model: this.#model } : {}),
      ...(prompt !== undefined ? { prompt } : {}),
    });
    const run: OpenRun = { builder, source, turnEnded: false, collecting };
    this.#runs.set(sessionId, run);
    this.#guard(() => this.#listener.onRunStart(builder.start));
    return run;
  }

  #emitEnd(
    sessionId: string,
    run: OpenRun,
    options: Parameters<RunBuilder['finish']>[0],
    subagentProvider?: string,
  ): void {
    const finished = run.builder.finish(options);
    const record = subagentProvider !== undefined ? { ...finished, subagentProvider } : finished;
    this.#lastRun.delete(sessionId); // re-inserted as the most recent
    this.#lastRun.set(sessionId, record.runId);
    if (this.#lastRun.size > REMEMBERED_CLOSED_SESSIONS) {
      const oldest = this.#lastRun.keys().next().value;
      if (oldest !== undefined) this.#lastRun.delete(oldest);
    }
    this.#guard(() => this.#listener.onRunEnd(record));
  }

  #malformed(error: WireError): void {
    this.#guard(() => this.#listener.onMalformed?.('sdk', { code: error.code, message: error.message }));
  }

  #guard(fn: () => void): void {
    try {
      fn();
    } catch {
      // A listener must not throw (RunListener contract); if one does, observation goes on
      // for the other runs. Telemetry reports its own failures through the diag logger.
    }
  }
}

/** The `sessionId` of raw `session.event` params, when it is a string. */
function sessionIdOf(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null) return undefined;
  const id = (params as { sessionId?: unknown }).sessionId;
  return typeof id === 'string' ? id : undefined;
}
