/**
 * Run tracking for the dsh SDK runtime protocol. Groups frames of both
 * directions into runs: a prompt turn on an SDK session (from `session/prompt`
 * or `turn/start` to `turn/end`), and an in-runtime subagent (from
 * `subagent.started` to `subagent.finished`, its events arriving as
 * `session.event` with the child's session id). Each run is accumulated by a
 * `RunBuilder` and reported to a `RunListener`. Also offers the in-process
 * attach: a callback usable as the SDK client's `onNotification`.
 *
 * Never throws on bad input: a frame whose params fail validation is reported
 * through `onMalformed` and skipped.
 *
 * @module subagent-otel/observe/sdk-tracker
 */
import { randomUUID } from 'node:crypto';
import type { JsonRpcFrame } from '../wire/jsonrpc.js';
import type { ContentBlock } from '../wire/content.js';
import {
  parseInitializeParams,
  parsePromptParams,
  parseSdkNotification,
  SDK_NOTIFICATIONS,
  SDK_REQUESTS,
  type SubagentFinishedParams,
} from '../wire/sdk-protocol.js';
import { isKnownEvent, type SessionEvent } from '../wire/events.js';
import type { WireError } from '../wire/wire-error.js';
import { stopReasonFromTurnEnd } from '../output/stop-reason.js';
import type { Direction, FrameObserver } from './frame-observer.js';
import { RunBuilder } from './run-builder.js';
import type { RunListener, RunSource } from './run-record.js';

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
  readonly builder: RunBuilder;
  readonly source: RunSource;
  /** Set once the turn has ended; prompt turns close right away, subagents wait for `subagent.finished`. */
  turnEnded: boolean;
  /** The `session/prompt` request whose arrival opened the run, if one did; only its answer may close the run. */
  promptId?: string | number;
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
  #closed = false;

  constructor(listener: RunListener, options: SdkTrackerOptions = {}) {
    this.#listener = listener;
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
    else if (frame.kind === 'response' && frame.id !== null) this.#onResponse(frame.id, frame.error, time);
  }

  /**
   * The in-process attach: pass a runtime notification as it arrives.
   * Accepts `(method, params)` or one `{ method, params }` object, so it can
   * be handed directly to an SDK client as its `onNotification` callback.
   * Never throws.
   */
  onNotification(methodOrNotification: string | { readonly method: string; readonly params?: unknown }, params?: unknown): void {
    if (this.#closed) return;
    if (typeof methodOrNotification === 'string') this.#onNotification(methodOrNotification, params, Date.now());
    else this.#onNotification(methodOrNotification.method, methodOrNotification.params, Date.now());
  }

  /** {@inheritDoc FrameObserver.close} */
  close(time: number, diagnostic = 'the stream ended before the run finished'): void {
    if (this.#closed) return;
    // Children first, so each subagent closes before the turn that started it.
    const entries = [...this.#runs.entries()].reverse();
    for (const [sessionId, run] of entries) {
      this.#runs.delete(sessionId);
      const stopReason = run.turnEnded ? stopReasonFromTurnEnd(run.builder.turnEnd) : 'error';
      this.#emitEnd(run, { endTime: time, stopReason, diagnostic });
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
      this.#open(sessionId, 'sdk', time, parsed.value.contentBlocks).promptId = id;
      return;
    }
    const queue = this.#queued.get(sessionId);
    if (queue === undefined) this.#queued.set(sessionId, [id]);
    else queue.push(id);
  }

  #onResponse(id: string | number, error: { readonly message: string } | undefined, time: number): void {
    const sessionId = this.#prompts.get(id);
    if (sessionId === undefined) return;
    this.#prompts.delete(id);
    this.#unqueue(sessionId, id);
    const run = this.#runs.get(sessionId);
    // Only the answer of the prompt a run belongs to can close it: a queued prompt's run may already
    // be open when the previous prompt is answered.
    if (run === undefined || run.source !== 'sdk' || run.promptId !== id) return;
    // The runtime answers a prompt after its turn ended; a run still open here ended uncleanly.
    this.#runs.delete(sessionId);
    this.#emitEnd(run, {
      endTime: time,
      stopReason: 'error',
      diagnostic: error !== undefined ? `session/prompt failed: ${error.message}` : 'session/prompt answered before the turn ended',
    });
  }

  #onNotification(method: string, params: unknown, time: number): void {
    const parsed = parseSdkNotification(method, params);
    if (!parsed.ok) return this.#malformed(parsed.error);
    if (!parsed.known) return;
    const n = parsed.notification;
    switch (n.method) {
      case SDK_NOTIFICATIONS.sessionEvent:
        this.#onEvent(n.params.sessionId, n.params.event, time);
        return;
      case SDK_NOTIFICATIONS.subagentStarted:
        this.#children.set(n.params.childSessionId, n.params.parentSessionId);
        if (!this.#runs.has(n.params.childSessionId)) this.#open(n.params.childSessionId, 'sdk-subagent', time);
        return;
      case SDK_NOTIFICATIONS.subagentFinished:
        this.#onSubagentFinished(n.params, time);
        return;
      default:
        return;
    }
  }

  #onEvent(sessionId: string, event: SessionEvent, time: number): void {
    let run = this.#runs.get(sessionId);
    if (run === undefined) {
      // Events outside a run (idle-time bookkeeping) are not output; a turn/start opens one.
      if (event.type !== 'turn/start') return;
      run = this.#open(sessionId, this.#children.has(sessionId) ? 'sdk-subagent' : 'sdk', event.time);
      const promptId = this.#queued.get(sessionId)?.[0];
      if (promptId !== undefined) {
        run.promptId = promptId;
        this.#unqueue(sessionId, promptId);
      }
    }
    if (event.type === 'session/end-seed') {
      // Everything before the seed marker was inherited: restart the run's accumulation from here.
      const fresh = new RunBuilder(run.builder.start);
      fresh.setRoute(this.#provider, this.#model);
      run = { builder: fresh, source: run.source, turnEnded: false, ...(run.promptId !== undefined ? { promptId: run.promptId } : {}) };
      this.#runs.set(sessionId, run);
      return;
    }
    run.builder.pushEvent(event);
    if (isKnownEvent(event) && event.type === 'turn/end') {
      run.turnEnded = true;
      if (run.source === 'sdk') {
        this.#runs.delete(sessionId);
        this.#emitEnd(run, { endTime: event.time, stopReason: stopReasonFromTurnEnd(event.data.reason) });
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
      run = this.#open(childId, 'sdk-subagent', time);
    }
    this.#runs.delete(childId);
    this.#children.delete(childId);
    const endTime = Math.max(run.builder.lastTime, time);
    this.#emitEnd(run, {
      endTime,
      stopReason: params.stopReason,
      provider: params.provider,
      agentName: this.#options.agentName ?? params.provider,
      reported: { output: params.lastAssistantMessage },
    });
  }

  #open(sessionId: string, source: RunSource, time: number, prompt?: readonly ContentBlock[]): OpenRun {
    const parentSessionId = this.#children.get(sessionId);
    const parentRun = parentSessionId !== undefined ? this.#runs.get(parentSessionId) : undefined;
    const agentName = this.#options.agentName ?? this.#provider ?? 'dsh';
    const builder = new RunBuilder({
      runId: (this.#options.newRunId ?? randomUUID)(),
      source,
      agentName,
      sessionId,
      ...(parentSessionId !== undefined ? { parentSessionId } : {}),
      ...(parentRun !== undefined ? { parentRunId: parentRun.builder.start.runId } : {}),
      ...(parentRun === undefined && this.#options.traceparent !== undefined ? { traceparent: this.#options.traceparent } : {}),
      ...(parentRun === undefined && this.#options.tracestate !== undefined ? { tracestate: this.#options.tracestate } : {}),
      startTime: time,
      ...(source === 'sdk-subagent' ? { inProcess: true } : {}),
      ...(this.#provider !== undefined ? { provider: this.#provider } : {}),
      ...(this.#model !== undefined ? { model: this.#model } : {}),
      ...(prompt !== undefined ? { prompt } : {}),
    });
    const run: OpenRun = { builder, source, turnEnded: false };
    this.#runs.set(sessionId, run);
    this.#guard(() => this.#listener.onRunStart(builder.start));
    return run;
  }

  #emitEnd(run: OpenRun, options: Parameters<RunBuilder['finish']>[0]): void {
    const record = run.builder.finish(options);
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
