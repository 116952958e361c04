/**
 * Run tracking for the Agent Client Protocol: turns the JSON-RPC frames of
 * one client-agent connection (both directions) into one run per prompt
 * turn. The stdio proxy and the ACP backend feed it the same frames, so both
 * select output through this one implementation.
 *
 * A run opens on the client's `session/prompt` request (its
 * `_meta.traceparent`, else the configured one, parents it) and closes on
 * whichever end comes first: the prompt response (v1: `stopReason` mapped
 * with `stopReasonFromAcp`; a JSON-RPC error gives `error` with its code and
 * text recorded) or a draft-v2 idle `state_update`. An answer that matches a
 * truncation signature (`acp-truncation.ts`) becomes `max-tokens` instead,
 * naming the signature. Later ends of the same turn are ignored. Updates keep
 * folding after `session/cancel` until the turn ends. Only
 * `agent_message_chunk` text is output (pushed into the one fold as raw
 * streamed text); thoughts, tool calls, plans and non-text blocks never are.
 *
 * Tool calls come from `tool_call`, `tool_call_update` and the tool call
 * inline in `session/request_permission` (some agents announce a tool that
 * needs permission only there); the client's answer is recorded on the tool.
 * Usage is the prompt response's `usage`, else the counts in its
 * `_meta.quota` (gemini-cli); a `usage_update` is the context window and the
 * session's cumulative cost, recorded as such, never as token usage.
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
  acpErrorText,
  acpMetaQuota,
  agentToolName,
  isAcpTextBlock,
  isKnownSessionUpdate,
  parseAcpCancelParams,
  parseAcpInitializeResult,
  parseAcpNewSessionResult,
  parseAcpPermissionRequest,
  parseAcpPermissionResponse,
  parseAcpPromptParams,
  parseAcpPromptResult,
  parseAcpSessionUpdate,
  tokenUsageFromAcp,
  type AcpKnownSessionUpdate,
  type AcpUsage,
  type AcpPermissionOption,
  type AcpToolCallFields,
} from '../wire/acp-protocol.js';
import type { JsonRpcFrame, JsonRpcId, JsonRpcResponse } from '../wire/jsonrpc.js';
import type { WireError } from '../wire/wire-error.js';
import { capUtf8, DIAGNOSTIC_MAX_BYTES } from '../output/result.js';
import { stopReasonFromAcp, type SubagentStopReason } from '../output/stop-reason.js';
import {
  ACP_TRUNCATION_SIGNATURES,
  matchTruncation,
  type AcpTruncationSignature,
  type AcpTurnAnswer,
} from './acp-truncation.js';
import { ACP_USAGE_SCOPES, usageScopeOf, usageDelta, type AcpUsageScopeEntry } from './acp-usage-scope.js';
import type { Direction, FrameObserver } from './frame-observer.js';
import { RunBuilder, guardListener } from './run-builder.js';
import type {
  RunListener,
  RunRecord,
  RunRpcError,
  RunStart,
  ToolCallRecord,
  ToolPermission,
  UsageOrigin,
} from './run-record.js';

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
  /** Truncation signatures to recognise. Default `ACP_TRUNCATION_SIGNATURES`; `[]` turns recognition off. */
  readonly truncationSignatures?: readonly AcpTruncationSignature[];
  /** Which agents report `PromptResponse.usage` as session totals. Default `ACP_USAGE_SCOPES`. */
  readonly usageScopes?: readonly AcpUsageScopeEntry[];
}

/** A tool call of an open run, as far as the agent has told. */
interface AcpTool {
  readonly callId: string;
  readonly startTime: number;
  /** The agent's own tool name from `_meta` (e.g. claude's `Bash`). */
  ownName?: string;
  /** A non-protocol `name` field, when an agent sends one. */
  fieldName?: string;
  title?: string;
  kind?: string;
  endTime?: number;
  isError: boolean;
  errorType?: string;
  permission?: ToolPermission;
}

interface OpenRun {
  readonly builder: RunBuilder;
  readonly sessionId: string;
  /** Id of the `session/prompt` request that opened the run. */
  readonly promptId: string | number;
  /** Tool calls by id, in the order they were first seen. */
  readonly tools: Map<string, AcpTool>;
  usageOrigin?: UsageOrigin;
  /** Session totals an agent reported that could not be turned into this turn's figures. */
  sessionUsageTotals?: { inputTokens: number; outputTokens: number };
  contextWindow?: { used: number; size: number };
  sessionCost?: { amount: number; currency: string };
  /** The turn's last `agent_message_chunk` text, when at most {@link LAST_TEXT_MAX_CHARS} long (text truncation signatures read it). */
  lastText?: string;
}

/** Longest last text chunk a run keeps for the truncation signatures; a longer one is no agent's error sentence. */
const LAST_TEXT_MAX_CHARS = 1024;

/** A `session/request_permission` the agent sent, until the client answers it. */
interface PendingPermission {
  readonly run: OpenRun;
  readonly toolCallId: string;
  readonly options: readonly AcpPermissionOption[];
}

/** How a turn ended, beyond its stop reason. */
interface TurnEnd {
  readonly stopReason: SubagentStopReason;
  readonly diagnostic?: string | undefined;
  readonly rpcError?: RunRpcError;
  readonly inferredFrom?: string;
}

/** How many sessions' creation and usage totals are remembered (oldest forgotten first); bounds a long-lived connection. */
const SESSION_MEMORY = 1024;

/** Drops the oldest entry of an insertion-ordered set or map once it holds more than `SESSION_MEMORY`. */
function forgetOldest(entries: Set<string> | Map<string, unknown>): void {
  if (entries.size <= SESSION_MEMORY) return;
  const oldest = entries.keys().next();
  if (oldest.done !== true) entries.delete(oldest.value);
}

/** Option kinds of protocol v1 recorded as the permission outcome. */
const PERMISSION_OPTION_KINDS = new Set(['allow_once', 'allow_always', 'reject_once', 'reject_always']);

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
  /** Permission requests the agent sent, by id, until the client answers them. */
  readonly #permissionRequests = new Map<JsonRpcId, PendingPermission>();
  readonly #signatures: readonly AcpTruncationSignature[];
  readonly #usageScopes: readonly AcpUsageScopeEntry[];
  /** Sessions this connection created (`session/new`): their usage totals started at zero under our eyes. */
  readonly #createdSessions = new Set<string>();
  /** Last usage totals of each session, for agents that report session totals. */
  readonly #sessionTotals = new Map<string, AcpUsage>();
  #agentInfoName: string | undefined;
  #closed = false;

  constructor(listener: RunListener, options: AcpTrackerOptions = {}) {
    this.#listener = guardListener(listener);
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#newRunId = options.newRunId ?? randomUUID;
    this.#signatures = options.truncationSignatures ?? ACP_TRUNCATION_SIGNATURES;
    this.#usageScopes = options.usageScopes ?? ACP_USAGE_SCOPES;
  }

  /** How many runs are open right now. */
  get openRuns(): number {
    return this.#openBySession.size;
  }

  /**
   * Folds one frame. Requests from the agent other than
   * `session/request_permission` (file-system, terminal requests), the
   * client's answers to them, and methods it does not know (`session/load`,
   * `authenticate`, extensions) are ignored. A frame whose params or result
   * fail validation is reported through `onMalformed('acp', error)` and
   * skipped (a malformed prompt response still ends its turn, as `error`).
   * Frames after {@link AcpTracker.close} are ignored.
   */
  observeFrame(direction: Direction, frame: JsonRpcFrame, time: number): void {
    if (this.#closed) return;
    if (direction === 'client->agent') {
      if (frame.kind === 'request') this.#clientRequest(frame.id, frame.method, frame.params, time);
      else if (frame.kind === 'notification' && frame.method === ACP_AGENT_METHODS.sessionCancel)
        this.#cancel(frame.params);
      else if (frame.kind === 'response') this.#clientResponse(frame, time);
      return;
    }
    if (frame.kind === 'notification') {
      if (frame.method === ACP_CLIENT_METHODS.sessionUpdate) this.#sessionUpdate(frame.params, time);
      return;
    }
    if (frame.kind === 'request') {
      if (frame.method === ACP_CLIENT_METHODS.requestPermission) this.#permissionRequest(frame.id, frame.params, time);
      return;
    }
    this.#agentResponse(frame, time);
  }

  /**
   * Ends every open run with `stopReason` and the output folded so far, e.g.
   * `aborted` when a cancelled agent never answered. Does not close the
   * tracker. @param time default: the configured clock.
   */
  endOpenRuns(stopReason: SubagentStopReason, diagnostic?: string, time: number = this.#now()): void {
    for (const run of [...this.#openBySession.values()]) this.#finish(run, time, { stopReason, diagnostic });
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
    this.#permissionRequests.clear();
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
      this.#finish(previous, time, {
        stopReason: 'error',
        diagnostic: 'a new prompt started on the session before this turn ended',
      });
    }
    // Trace context travels as a pair: the prompt's own, else the configured one.
    const fromMeta = _meta?.traceparent !== undefined;
    const traceparent = fromMeta ? _meta?.traceparent : this.#options.traceparent;
    const tracestate = fromMeta
      ? _meta?.tracestate
      : this.#options.traceparent !== undefined
        ? this.#options.tracestate
        : undefined;
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
    const run: OpenRun = { builder: new RunBuilder(start), sessionId, promptId: id, tools: new Map() };
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
        if (isAcpTextBlock(update.content)) {
          run.builder.pushText(update.content.text);
          if (update.content.text !== '')
            run.lastText = update.content.text.length <= LAST_TEXT_MAX_CHARS ? update.content.text : undefined;
        }
        return;
      case ACP_SESSION_UPDATES.toolCall:
      case ACP_SESSION_UPDATES.toolCallUpdate:
        // An update for a call never announced still names a tool call: it is recorded from what it says.
        this.#noteTool(run, update, time);
        return;
      case ACP_SESSION_UPDATES.usageUpdate:
        // The context window now and the session's running cost: neither is this turn's token usage.
        run.contextWindow = { used: update.used, size: update.size };
        if (update.cost !== undefined) run.sessionCost = { amount: update.cost.amount, currency: update.cost.currency };
        return;
      case ACP_SESSION_UPDATES.stateUpdate: {
        if (update.state !== 'idle') return;
        const failure = update.error;
        if (failure?.code !== undefined && stopReasonFromAcp(update.stopReason) === 'error') {
          this.#finishWithError(run, time, { code: failure.code, message: failure.message ?? '' });
          return;
        }
        this.#finish(run, time, {
          stopReason: stopReasonFromAcp(update.stopReason),
          diagnostic: endDiagnostic(
            update.stopReason,
            failure?.message,
            'the agent went idle without reporting a stop reason',
          ),
        });
        return;
      }
      default:
        // Thought and user chunks, plans: never output, never usage.
        return;
    }
  }

  /** Records what an announcement, update or permission request says about a tool call; its first terminal status ends it. */
  #noteTool(run: OpenRun, fields: AcpToolCallFields, time: number): AcpTool {
    let tool = run.tools.get(fields.toolCallId);
    if (tool === undefined) {
      tool = { callId: fields.toolCallId, startTime: time, isError: false };
      run.tools.set(tool.callId, tool);
    }
    const ownName = agentToolName(fields._meta);
    if (ownName !== undefined) tool.ownName = ownName;
    if (typeof fields.name === 'string' && fields.name !== '') tool.fieldName = fields.name;
    if (typeof fields.title === 'string' && fields.title !== '') tool.title = fields.title;
    if (typeof fields.kind === 'string' && fields.kind !== '') tool.kind = fields.kind;
    if (tool.endTime === undefined) {
      if (fields.status === 'completed') endTool(tool, time, undefined);
      else if (fields.status === 'failed') endTool(tool, time, 'tool_error');
    }
    return tool;
  }

  #permissionRequest(id: JsonRpcId, params: unknown, time: number): void {
    const parsed = parseAcpPermissionRequest(params);
    if (!parsed.ok) {
      this.#malformed(parsed.error);
      return;
    }
    const { sessionId, toolCall, options } = parsed.value;
    const run = this.#openBySession.get(sessionId);
    if (run === undefined) return;
    // The inline tool call's status is the request's state (`pending`), never the tool's end.
    const { status: _status, ...fields } = toolCall;
    const tool = this.#noteTool(run, fields, time);
    tool.permission = { outcome: 'pending' };
    this.#permissionRequests.set(id, { run, toolCallId: tool.callId, options });
  }

  #clientResponse(frame: JsonRpcResponse, time: number): void {
    if (frame.id === null) return;
    const pending = this.#permissionRequests.get(frame.id);
    if (pending === undefined) return;
    this.#permissionRequests.delete(frame.id);
    const { run } = pending;
    const tool = run.tools.get(pending.toolCallId);
    if (tool === undefined || this.#openBySession.get(run.sessionId) !== run) return;
    if (frame.error !== undefined) {
      tool.permission = { outcome: 'error' };
      return;
    }
    const parsed = parseAcpPermissionResponse(frame.result);
    if (!parsed.ok) {
      this.#malformed(parsed.error);
      return;
    }
    const answer = parsed.value;
    if ('optionId' in answer) {
      const kind = pending.options.find((option) => option.optionId === answer.optionId)?.kind;
      const outcome = kind !== undefined && PERMISSION_OPTION_KINDS.has(kind) ? kind : 'selected';
      tool.permission = { outcome, optionId: answer.optionId };
      // A rejected call never runs: it ends here unless the agent already ended it.
      if (outcome.startsWith('reject_') && tool.endTime === undefined) endTool(tool, time, 'permission_rejected');
      return;
    }
    tool.permission = { outcome: answer.outcome };
    if (answer.outcome === 'cancelled' && tool.endTime === undefined) endTool(tool, time, 'permission_cancelled');
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
    if (pending.method === ACP_AGENT_METHODS.sessionNew) {
      if (frame.error !== undefined) return;
      const created = parseAcpNewSessionResult(frame.result);
      if (created.ok) {
        this.#createdSessions.add(created.value.sessionId);
        forgetOldest(this.#createdSessions);
      }
      return;
    }
    if (!('run' in pending)) return;
    const run = pending.run;
    // Unreadable prompt, or a turn already ended by an idle state update: a later duplicate.
    if (run === undefined || this.#openBySession.get(run.sessionId) !== run) return;
    if (frame.error !== undefined) {
      this.#finishWithError(run, time, frame.error);
      return;
    }
    const parsed = parseAcpPromptResult(frame.result);
    if (!parsed.ok) {
      this.#malformed(parsed.error);
      this.#finish(run, time, {
        stopReason: 'error',
        diagnostic: `malformed session/prompt response: ${parsed.error.message}`,
      });
      return;
    }
    const { stopReason, usage, _meta } = parsed.value;
    if (usage !== undefined) {
      this.#promptUsage(run, usage);
    } else {
      const quota = acpMetaQuota(_meta);
      if (quota !== undefined) {
        run.builder.addUsage({ inputTokens: quota.inputTokens, outputTokens: quota.outputTokens });
        run.usageOrigin = 'meta-quota';
      }
    }
    // A draft-v2 acceptance (messageId, no stopReason): the turn goes on until an idle state update.
    if (stopReason === undefined) return;
    const answer: AcpTurnAnswer = {
      kind: 'result',
      stopReason,
      ...(_meta !== undefined ? { meta: _meta } : {}),
      ...(run.lastText !== undefined ? { lastText: run.lastText } : {}),
    };
    const signature =
      stopReasonFromAcp(stopReason) === 'max-tokens' ? undefined : matchTruncation(answer, this.#signatures);
    if (signature !== undefined) {
      this.#finish(run, time, { stopReason: 'max-tokens', inferredFrom: signature.id });
      return;
    }
    this.#finish(run, time, {
      stopReason: stopReasonFromAcp(stopReason),
      diagnostic: endDiagnostic(stopReason, undefined, undefined),
    });
  }

  /**
   * Records a `PromptResponse.usage`: as the turn's figures, or, for an agent
   * that reports session totals, as the difference from the session's previous
   * totals (from zero for a session created on this connection). When there
   * is nothing to subtract from, or a count went down, the totals are kept as
   * such and no turn usage is recorded.
   */
  #promptUsage(run: OpenRun, usage: AcpUsage): void {
    if (usageScopeOf(this.#agentInfoName, this.#usageScopes) === 'turn') {
      run.builder.addUsage(tokenUsageFromAcp(usage));
      run.usageOrigin = 'prompt-response';
      return;
    }
    const previous =
      this.#sessionTotals.get(run.sessionId) ??
      (this.#createdSessions.has(run.sessionId) ? { inputTokens: 0, outputTokens: 0 } : undefined);
    this.#sessionTotals.delete(run.sessionId);
    this.#sessionTotals.set(run.sessionId, usage);
    forgetOldest(this.#sessionTotals);
    const turn = previous === undefined ? undefined : usageDelta(usage, previous);
    if (turn === undefined) {
      run.sessionUsageTotals = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
      return;
    }
    run.builder.addUsage(tokenUsageFromAcp(turn));
    run.usageOrigin = 'prompt-response-session-delta';
  }

  /** Ends a turn the agent answered with a failure: `error`, or `max-tokens` when a truncation signature matches. */
  #finishWithError(
    run: OpenRun,
    time: number,
    error: { readonly code: number; readonly message: string; readonly data?: unknown },
  ): void {
    const text = acpErrorText(error);
    const rpcError: RunRpcError = { code: error.code, message: capUtf8(text, DIAGNOSTIC_MAX_BYTES) };
    const signature = matchTruncation(
      { kind: 'error', code: error.code, message: error.message, data: error.data },
      this.#signatures,
    );
    this.#finish(run, time, {
      stopReason: signature !== undefined ? 'max-tokens' : 'error',
      diagnostic: text,
      rpcError,
      ...(signature !== undefined ? { inferredFrom: signature.id } : {}),
    });
  }

  #finish(run: OpenRun, time: number, end: TurnEnd): void {
    if (this.#openBySession.get(run.sessionId) === run) this.#openBySession.delete(run.sessionId);
    for (const [id, pending] of this.#permissionRequests) if (pending.run === run) this.#permissionRequests.delete(id);
    const { stopReason, diagnostic } = end;
    const base = run.builder.finish({ endTime: time, stopReason, ...(diagnostic !== undefined ? { diagnostic } : {}) });
    const record: RunRecord = {
      ...base,
      toolCalls: [...run.tools.values()].map((tool) => toolRecord(tool, stopReason === 'completed')),
      ...(end.inferredFrom !== undefined ? { stopReasonInferredFrom: end.inferredFrom } : {}),
      ...(end.rpcError !== undefined ? { rpcError: end.rpcError } : {}),
      ...(run.usageOrigin !== undefined ? { usageOrigin: run.usageOrigin } : {}),
      ...(run.sessionUsageTotals !== undefined ? { sessionUsageTotals: { ...run.sessionUsageTotals } } : {}),
      ...(run.contextWindow !== undefined ? { contextWindow: { ...run.contextWindow } } : {}),
      ...(run.sessionCost !== undefined ? { sessionCost: { ...run.sessionCost } } : {}),
    };
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
function endDiagnostic(
  stopReason: string | undefined,
  failure: string | undefined,
  missing: string | undefined,
): string | undefined {
  if (failure !== undefined && failure !== '') return failure;
  if (stopReason === undefined) return missing;
  if (stopReasonFromAcp(stopReason) !== 'error') return undefined;
  return `the agent ended the turn with stop reason "${stopReason}"`;
}

function endTool(tool: AcpTool, time: number, errorType: string | undefined): void {
  tool.endTime = time;
  tool.isError = errorType !== undefined;
  if (errorType !== undefined) tool.errorType = errorType;
}

/**
 * The record of one tool call. Its name is the agent's own tool name when
 * `_meta` reported one, else a `name` field, else absent: a title or call id
 * is never a name (unbounded values; decision 0048). A call without an end is
 * marked failed `unfinished` unless the run completed.
 */
function toolRecord(tool: AcpTool, completed: boolean): ToolCallRecord {
  const unfinished = tool.endTime === undefined && !completed;
  const name = tool.ownName ?? tool.fieldName;
  return {
    callId: tool.callId,
    ...(name !== undefined ? { name } : {}),
    startTime: tool.startTime,
    ...(tool.endTime !== undefined ? { endTime: tool.endTime } : {}),
    isError: tool.isError || unfinished,
    ...(tool.errorType !== undefined ? { errorType: tool.errorType } : unfinished ? { errorType: 'unfinished' } : {}),
    ...(tool.kind !== undefined ? { toolType: tool.kind } : {}),
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.permission !== undefined ? { permission: { ...tool.permission } } : {}),
  };
}
