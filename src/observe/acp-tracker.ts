/**
 * Run tracking for the Agent Client Protocol: turns the JSON-RPC frames of
 * one client-agent connection (both directions) into one run per prompt
 * turn. The stdio proxy and the ACP backend feed it the same frames, so both
 * select output through this one implementation.
 *
 * A run opens on the client's `session/prompt` request (its
 * `_meta.traceparent`, else the configured one, parents it) and closes on
 * whichever end comes first: the prompt response (v1: `stopReason` mapped
 * with `stopReasonFromAcp`; a JSON-RPC error gives `error` with its message
 * as diagnostic) or a draft-v2 idle `state_update`. Later ends of the same
 * turn are ignored. Updates keep folding after `session/cancel` until the
 * turn ends. Only `agent_message_chunk` text is output (pushed into the one
 * fold as raw streamed text); thoughts, tool calls, plans and non-text
 * blocks never are. Tool calls come from `tool_call`/`tool_call_update`.
 * Usage is recorded only when the prompt response reports it.
 *
 * Owns no I/O and no output rule (`output/`), no telemetry (`telemetry/`).
 *
 * @module subagent-otel/observe/acp-tracker
 */
import { randomUUID } from 'node:crypto';
import {
  ACP_AGENT_METHODS,
  ACP_CLIENT_METHODS,
  ACP_SESSION_UPDATES,
  isAcpTextBlock,
  isKnownSessionUpdate,
  parseAcpCancelParams,
  parseAcpInitializeResult,
  parseAcpPromptParams,
  parseAcpPromptResult,
  parseAcpSessionUpdate,
  tokenUsageFromAcp,
  type AcpKnownSessionUpdate,
} from '../wire/acp-protocol.js';
import type { JsonRpcFrame, JsonRpcResponse } from '../wire/jsonrpc.js';
import type { WireError } from '../wire/wire-error.js';
import { stopReasonFromAcp, type SubagentStopReason } from '../output/stop-reason.js';
import type { Direction, FrameObserver } from './frame-observer.js';
import { RunBuilder } from './run-builder.js';
import type { RunListener, RunStart } from './run-record.js';

/** `origin` passed to `RunListener.onMalformed` for frames this tracker rejects. */
export const ACP_ORIGIN = 'acp' as const;

/** Agent name used when neither the options nor the agent's `initialize` answer name one. */
export const ACP_DEFAULT_AGENT_NAME = 'acp' as const;

/** Options of an {@link AcpTracker}. */
export interface AcpTrackerOptions {
  /** Label of every run (`gen_ai.agent.name`). Default: the agent's `initialize` `agentInfo.name`, else `acp`. */
  readonly agentName?: string;
  /** W3C `traceparent` for runs whose `session/prompt` carries none in `_meta` (e.g. the `TRACEPARENT` environment variable). */
  readonly traceparent?: string;
  /** W3C `tracestate` that goes with `traceparent` (used only when that fallback is). */
  readonly tracestate?: string;
  /** Clock for calls that carry no time ({@link AcpTracker.endOpenRuns}). Default `Date.now`. */
  readonly now?: () => number;
  /** Run id factory. Default `crypto.randomUUID`. */
  readonly newRunId?: () => string;
}

interface OpenRun {
  readonly builder: RunBuilder;
  readonly sessionId: string;
  /** Id of the `session/prompt` request that opened the run. */
  readonly promptId: string | number;
}

type PendingRequest =
  | { readonly method: typeof ACP_AGENT_METHODS.sessionPrompt; readonly run: OpenRun | undefined }
  | { readonly method: string };

/**
 * Tracks ACP prompt turns as runs. Feed it every frame of one connection in
 * arrival order with {@link AcpTracker.observeFrame}; it calls the listener's
 * `onRunStart` when a turn opens and `onRunEnd` exactly once when it closes.
 * Never throws (a throwing listener is the caller's bug and propagates), never
 * blocks, never retains a frame after the call.
 */
export class AcpTracker implements FrameObserver {
  readonly #listener: RunListener;
  readonly #options: AcpTrackerOptions;
  readonly #now: () => number;
  readonly #newRunId: () => string;
  /** Requests the client sent, by id, until the agent answers them. */
  readonly #clientRequests = new Map<string | number, PendingRequest>();
  /** The open run of each session (at most one prompt turn runs per session). */
  readonly #openBySession = new Map<string, OpenRun>();
  #agentInfoName: string | undefined;
  #closed = false;

  constructor(listener: RunListener, options: AcpTrackerOptions = {}) {
    this.#listener = listener;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#newRunId = options.newRunId ?? randomUUID;
  }

  /** How many runs are open right now. */
  get openRuns(): number {
    return this.#openBySession.size;
  }

  /**
   * Folds one frame. Requests and notifications from the agent other than
   * `session/update` (permission, file-system, terminal requests), responses
   * from the client, and methods it does not know (`session/load`,
   * `authenticate`, extensions) are ignored. A frame whose params or result
   * fail validation is reported through `onMalformed('acp', error)` and
   * skipped (a malformed prompt response still ends its turn, as `error`).
   * Frames after {@link AcpTracker.close} are ignored.
   */
  observeFrame(direction: Direction, frame: JsonRpcFrame, time: number): void {
    if (this.#closed) return;
    if (direction === 'client->agent') {
      if (frame.kind === 'request') this.#clientRequest(frame.id, frame.method, frame.params, time);
      else if (frame.kind === 'notification' && frame.method === ACP_AGENT_METHODS.sessionCancel) this.#cancel(frame.params);
      return;
    }
    if (frame.kind === 'notification') {
      if (frame.method === ACP_CLIENT_METHODS.sessionUpdate) this.#sessionUpdate(frame.params, time);
      return;
    }
    if (frame.kind === 'response') this.#agentResponse(frame, time);
  }

  /**
   * Ends every open run with `stopReason` and the output folded so far, e.g.
   * `aborted` when a cancelled agent never answered. Does not close the
   * tracker. @param time default: the configured clock.
   */
  endOpenRuns(stopReason: SubagentStopReason, diagnostic?: string, time: number = this.#now()): void {
    for (const run of [...this.#openBySession.values()]) this.#finish(run, time, stopReason, diagnostic);
  }

  /**
   * The stream ended: every open run closes as `error` with the output folded
   * so far and `diagnostic` (default: the turn did not finish). Later frames
   * are ignored. Idempotent.
   */
  close(time: number, diagnostic?: string): void {
    if (this.#closed) return;
    this.endOpenRuns('error', diagnostic ?? 'the connection ended before the prompt turn finished', time);
    this.#closed = true;
    this.#clientRequests.clear();
  }

  #clientRequest(id: string | number, method: string, params: unknown, time: number): void {
    if (method !== ACP_AGENT_METHODS.sessionPrompt) {
      this.#clientRequests.set(id, { method });
      return;
    }
    const parsed = parseAcpPromptParams(params);
    if (!parsed.ok) {
      // No run for an unreadable prompt; its response is then ignored.
      this.#malformed(parsed.error);
      this.#clientRequests.set(id, { method, run: undefined });
      return;
    }
    const { sessionId, _meta, prompt } = parsed.value;
    const previous = this.#openBySession.get(sessionId);
    if (previous !== undefined) {
      this.#finish(previous, time, 'error', 'a new prompt started on the session before this turn ended');
    }
    // Trace context travels as a pair: the prompt's own, else the configured one.
    const fromMeta = _meta?.traceparent !== undefined;
    const traceparent = fromMeta ? _meta?.traceparent : this.#options.traceparent;
    const tracestate = fromMeta ? _meta?.tracestate : this.#options.traceparent !== undefined ? this.#options.tracestate : undefined;
    const start: RunStart = {
      runId: this.#newRunId(),
      source: 'acp',
      agentName: this.#options.agentName ?? this.#agentInfoName ?? ACP_DEFAULT_AGENT_NAME,
      sessionId,
      ...(traceparent !== undefined ? { traceparent } : {}),
      ...(tracestate !== undefined ? { tracestate } : {}),
      startTime: time,
      prompt,
    };
    const run: OpenRun = { builder: new RunBuilder(start), sessionId, promptId: id };
    this.#openBySession.set(sessionId, run);
    this.#clientRequests.set(id, { method, run });
    this.#listener.onRunStart(start);
  }

  #cancel(params: unknown): void {
    const parsed = parseAcpCancelParams(params);
    if (!parsed.ok) this.#malformed(parsed.error);
    // A cancel changes nothing here: updates keep folding until the turn's end arrives.
  }

  #sessionUpdate(params: unknown, time: number): void {
    const parsed = parseAcpSessionUpdate(params);
    if (!parsed.ok) {
      this.#malformed(parsed.error);
      return;
    }
    const { sessionId, update } = parsed.value;
    const run = this.#openBySession.get(sessionId);
    // Updates outside a turn (history replayed by session/load, commands, background work) belong to no run.
    if (run === undefined || !isKnownSessionUpdate(update)) return;
    this.#foldUpdate(run, update, time);
  }

  #foldUpdate(run: OpenRun, update: AcpKnownSessionUpdate, time: number): void {
    switch (update.sessionUpdate) {
      case ACP_SESSION_UPDATES.agentMessageChunk:
        if (isAcpTextBlock(update.content)) run.builder.pushText(update.content.text);
        return;
      case ACP_SESSION_UPDATES.toolCall:
        run.builder.toolStarted(update.toolCallId, update.name ?? update.title, time);
        this.#toolStatus(run, update.toolCallId, update.status, time);
        return;
      case ACP_SESSION_UPDATES.toolCallUpdate:
        // An update for a call never announced still names a tool call: record it from what it says.
        run.builder.toolStarted(update.toolCallId, update.name ?? update.title ?? update.toolCallId, time);
        this.#toolStatus(run, update.toolCallId, update.status, time);
        return;
      case ACP_SESSION_UPDATES.stateUpdate:
        if (update.state !== 'idle') return;
        this.#finish(
          run,
          time,
          stopReasonFromAcp(update.stopReason),
          endDiagnostic(update.stopReason, update.error?.message, 'the agent went idle without reporting a stop reason'),
        );
        return;
      default:
        // Thought and user chunks, plans, context-window usage: never output, never usage.
        return;
    }
  }

  #toolStatus(run: OpenRun, toolCallId: string, status: string | null | undefined, time: number): void {
    if (status === 'completed') run.builder.toolFinished(toolCallId, time, false);
    else if (status === 'failed') run.builder.toolFinished(toolCallId, time, true, 'tool_error');
  }

  #agentResponse(frame: JsonRpcResponse, time: number): void {
    if (frame.id === null) return; // an error about a message the agent could not read; it answers no request
    const pending = this.#clientRequests.get(frame.id);
    if (pending === undefined) return;
    this.#clientRequests.delete(frame.id);
    if (pending.method === ACP_AGENT_METHODS.initialize) {
      if (frame.error !== undefined) return;
      const parsed = parseAcpInitializeResult(frame.result);
      if (!parsed.ok) this.#malformed(parsed.error);
      else if (parsed.value.agentInfo !== undefined) this.#agentInfoName = parsed.value.agentInfo.name;
      return;
    }
    if (!('run' in pending)) return;
    const run = pending.run;
    // Unreadable prompt, or a turn already ended by an idle state update: a later duplicate.
    if (run === undefined || this.#openBySession.get(run.sessionId) !== run) return;
    if (frame.error !== undefined) {
      this.#finish(run, time, 'error', frame.error.message);
      return;
    }
    const parsed = parseAcpPromptResult(frame.result);
    if (!parsed.ok) {
      this.#malformed(parsed.error);
      this.#finish(run, time, 'error', `malformed session/prompt response: ${parsed.error.message}`);
      return;
    }
    const { stopReason, usage } = parsed.value;
    if (usage !== undefined) run.builder.addUsage(tokenUsageFromAcp(usage));
    // A draft-v2 acceptance (messageId, no stopReason): the turn goes on until an idle state update.
    if (stopReason === undefined) return;
    this.#finish(run, time, stopReasonFromAcp(stopReason), endDiagnostic(stopReason, undefined, undefined));
  }

  #finish(run: OpenRun, time: number, stopReason: SubagentStopReason, diagnostic: string | undefined): void {
    if (this.#openBySession.get(run.sessionId) === run) this.#openBySession.delete(run.sessionId);
    const record = run.builder.finish({ endTime: time, stopReason, ...(diagnostic !== undefined ? { diagnostic } : {}) });
    this.#listener.onRunEnd(record);
  }

  #malformed(error: WireError): void {
    this.#listener.onMalformed?.(ACP_ORIGIN, { code: error.code, message: error.message });
  }
}

/**
 * Diagnostic of a turn end: the agent's own failure message when it gave one;
 * for a raw stop reason that maps to `error` (`max_turn_requests`, unknown
 * values) a sentence naming it; for a missing one, `missing`; else none.
 */
function endDiagnostic(stopReason: string | undefined, failure: string | undefined, missing: string | undefined): string | undefined {
  if (failure !== undefined && failure !== '') return failure;
  if (stopReason === undefined) return missing;
  if (stopReasonFromAcp(stopReason) !== 'error') return undefined;
  return `the agent ended the turn with stop reason "${stopReason}"`;
}
