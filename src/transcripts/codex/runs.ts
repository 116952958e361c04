/**
 * Codex rollouts into runs: one thread (one rollout file) is one run, fed
 * its typed records in file order (`transcripts/codex/records.ts`), closed
 * into a `RunRecord` through the shared `TranscriptRunBuilder`.
 *
 * Owns what the records mean for a run: which records are a child's copy of
 * its parent's history (skipped: not the child's work), how cumulative
 * `token_count` snapshots become one model call per usage delta, paired
 * with the response items recorded before it, which tool calls ran, how
 * each turn ended and what that makes of the run's stop reason, and what a
 * parent's records say about its children (the `spawn_agent` call that
 * started each, the status its collab tools last reported). Pure: no I/O;
 * which files form a session and in what order they are read is
 * `transcripts/codex/files.ts`'s. Every rule and its source is in
 * docs/TRANSCRIPTS.md, "Codex".
 *
 * @module subagent-otel/transcripts/codex/runs
 */
import type { ContentBlock, TokenUsage } from '../../wire/content.js';
import {
  codexArgument,
  parseCodexCollabOutput,
  parseCodexSubagentNotification,
  parseCodexInterAgentMessage,
  type CodexAgentStatus,
  type CodexEvent,
  type CodexRecord,
  type CodexResponseItem,
  type CodexSessionMeta,
  type CodexTokenUsage,
} from './records.js';
import type { RunRecord, RunStart } from '../../observe/run-record.js';
import { TranscriptRunBuilder, UNKNOWN_STOP, type TranscriptCall, type TranscriptStop } from '../transcript-run.js';

/** `gen_ai.agent.name` of a root thread's run. */
export const CODEX_AGENT_NAME = 'codex' as const;
/** `gen_ai.agent.name` of a spawned child that names no role. */
export const CODEX_SUBAGENT_NAME = 'subagent' as const;

/**
 * How long after a child's copied parent header its records still count as
 * the copy, when the file numbers no records (ms). Codex writes the whole
 * copy in one burst when the child is created, each line stamped with the
 * time it is written; the child's first model response comes later.
 */
export const COPIED_HISTORY_WINDOW_MS = 1000;

/**
 * The text of the tool output Codex 0.110-0.118 appended as the last record
 * of a child's copied history (`FORKED_SPAWN_AGENT_OUTPUT_MESSAGE`).
 */
const FORKED_OUTPUT_PREFIX = 'You are the newly spawned agent.';

/** Error kinds that do not end a turn (`CodexErrorInfo::affects_turn_status`). */
const ERRORS_NOT_AFFECTING_TURN = new Set(['thread_rollback_failed', 'active_turn_not_steerable']);

/** The collab tools whose outputs say something about children. */
const COLLAB_TOOLS = new Set(['spawn_agent', 'wait', 'wait_agent', 'close_agent']);

/** The run id of a Codex thread. */
export function codexRunId(threadId: string): string {
  return `codex:${threadId}`;
}

/** What a parent's records say about one child, by the reference (thread id or agent path) they name it with. */
export interface CodexChildLink {
  /** The `spawn_agent` call whose output (or `collab_agent_spawn_end`) names the child. */
  readonly spawnCallId?: string;
  /** The task the parent gave (`spawn_agent`'s `message`). */
  readonly prompt?: string;
  /** The last final status the parent's tools or notifications reported for the child. */
  readonly status?: CodexAgentStatus;
}

/** The links one parent thread recorded, by reference. */
export type CodexLinkBook = ReadonlyMap<string, CodexChildLink>;

/** Finds the link for a child by its thread id, then by its agent path. */
export function findCodexLink(
  book: CodexLinkBook | undefined,
  threadId: string,
  agentPath?: string,
): CodexChildLink | undefined {
  if (book === undefined) return undefined;
  const byId = book.get(threadId);
  if (byId !== undefined) return byId;
  return agentPath !== undefined ? book.get(agentPath) : undefined;
}

/** Identity of one thread's run, as its session's grouping decided. */
export interface CodexThreadStart {
  /** The session's trace key (`codex:<root thread id>`). */
  readonly traceKey: string;
  /** `gen_ai.agent.name`. */
  readonly agentName: string;
  /** The parent thread, when its file is part of the session (its run exists). */
  readonly parentThreadId?: string;
  /** What the parent recorded about this thread (a child), when anything. */
  readonly link?: CodexChildLink;
  /** The parent thread named by the child's own `session_meta` when that file is absent (never a run link). */
  readonly missingParentThreadId?: string;
}

/** How one turn ended. */
interface Turn {
  id: string | undefined;
  /** Stop evidence of an error recorded in the turn. */
  error: TranscriptStop | undefined;
  /** The turn's own end (`task_complete`, `turn_aborted`), once recorded. */
  end: TranscriptStop | undefined;
}

/** Whether `stop` records a truncation. */
function isTruncation(stop: TranscriptStop | undefined): boolean {
  return stop?.reason === 'max-tokens';
}

/**
 * The stop evidence of an `error` event's text: "Incomplete response
 * returned, reason: <reason>" (a Responses `response.incomplete`, surfaced
 * once Codex's retries are spent) by its reason, any other text an error.
 */
export function codexErrorStop(message: string, errorInfo?: string): TranscriptStop {
  const incomplete = /Incomplete response returned, reason: ([A-Za-z_]+)/.exec(message);
  if (incomplete !== null) {
    const reason = incomplete[1] ?? 'unknown';
    const stopReason =
      reason === 'max_output_tokens' ? 'max-tokens' : reason === 'content_filter' ? 'refusal' : 'error';
    return { reason: stopReason, inferredFrom: `codex:incomplete:${reason}`, diagnostic: message };
  }
  return {
    reason: 'error',
    inferredFrom: errorInfo !== undefined ? `codex:error:${errorInfo}` : 'codex:error',
    diagnostic: message,
  };
}

/** The stop evidence of a parent's report about a child, when it says how the child ended. */
export function codexParentResultStop(status: CodexAgentStatus | undefined): TranscriptStop | undefined {
  if (status === undefined) return undefined;
  if (status.kind === 'completed') return { reason: 'completed', inferredFrom: 'codex:parent-result:completed' };
  if (status.kind === 'errored') {
    const own = codexErrorStop(status.message);
    const what = own.inferredFrom.startsWith('codex:incomplete:') ? own.inferredFrom.slice('codex:'.length) : 'errored';
    return { ...own, inferredFrom: `codex:parent-result:${what}` };
  }
  return undefined;
}

/**
 * Whether a tool's output text reports a failed command: the exit-code
 * header Codex writes before a command's output ("Process exited with code
 * N" for `exec_command`, "Exit code: N" for the shell tools) with N not 0.
 */
export function isFailedCommandOutput(text: string): boolean {
  const outputAt = text.indexOf('\nOutput:');
  const header = text.slice(0, outputAt === -1 ? Math.min(text.length, 512) : outputAt);
  const match = /^(?:Process exited with code|Exit code:) (-?\d+)\s*$/m.exec(header);
  return match !== null && match[1] !== '0';
}

/** Codex's counts in dsh buckets: `inputTokens` the uncached input (Codex's input includes the cached part), `reasoningTokens` a part of `outputTokens`. */
export function codexUsage(delta: CodexTokenUsage): TokenUsage {
  const cached = Math.max(0, delta.cachedInputTokens);
  return {
    inputTokens: Math.max(0, delta.inputTokens - cached),
    outputTokens: Math.max(0, delta.outputTokens),
    cacheReadTokens: cached,
    reasoningTokens: Math.max(0, delta.reasoningOutputTokens),
  };
}

const USAGE_KEYS = [
  'inputTokens',
  'cachedInputTokens',
  'outputTokens',
  'reasoningOutputTokens',
  'totalTokens',
] as const;

function sameUsage(a: CodexTokenUsage, b: CodexTokenUsage): boolean {
  return USAGE_KEYS.every((key) => a[key] === b[key]);
}

/** Where the copy of a parent's history is, when the file holds one. */
type CopyMode =
  /** No copy (a root, or a child spawned without history). */
  | { readonly kind: 'none' }
  /** Records with an `ordinal` below `start` are the copy. */
  | { readonly kind: 'ordinal'; readonly start: number }
  /** The copy began with a foreign `session_meta` at `since` and is still running. */
  | { readonly kind: 'header'; readonly since: number }
  /** The copy (by header and time) ended. */
  | { readonly kind: 'ended' };

/**
 * Reads one Codex thread (one rollout file) into its run. Construct with the
 * file's line 1, `push` every further record in file order, then `finish`
 * once. Never throws.
 */
export class CodexThreadReader {
  readonly #meta: CodexSessionMeta;
  readonly #start: RunStart;
  readonly #thread: CodexThreadStart;
  #builder: TranscriptRunBuilder;
  #copy: CopyMode;
  #records = 0;
  #copied = 0;
  /** The last cumulative usage seen (the copy's included: a forked child's totals continue from it). */
  #baseline: CodexTokenUsage | undefined;
  #model: string | undefined;
  #pending: ContentBlock[] = [];
  #pendingTime: number | undefined;
  #turn: Turn | undefined;
  #turns = 0;
  /** The first truncation any ended turn recorded. */
  #truncation: TranscriptStop | undefined;
  /** The last ended turn's stop. */
  #lastTurnStop: TranscriptStop | undefined;
  #prompted = false;
  #lastAgentMessage: string | null | undefined;
  #syntheticIds = 0;
  /** Collab calls of this thread awaiting their output: call id to tool name and the reference its arguments name. */
  #collabCalls = new Map<string, { readonly name: string; readonly target?: string; readonly prompt?: string }>();
  #links = new Map<string, CodexChildLink>();

  /**
   * @param meta line 1 of the file (its `session_meta`).
   * @param time line 1's timestamp (epoch ms; the run's start).
   */
  constructor(meta: CodexSessionMeta, time: number, thread: CodexThreadStart) {
    this.#meta = meta;
    this.#thread = thread;
    const parentRunId = thread.parentThreadId !== undefined ? codexRunId(thread.parentThreadId) : undefined;
    const startTime = Number.isFinite(time) ? time : Date.parse(meta.timestamp ?? '');
    this.#start = {
      runId: codexRunId(meta.id),
      source: 'codex',
      agentName: thread.agentName,
      sessionId: meta.id,
      traceKey: thread.traceKey,
      startTime: Number.isFinite(startTime) ? startTime : 0,
      provider: meta.modelProvider === undefined || meta.modelProvider === 'openai' ? 'openai' : meta.modelProvider,
      ...(thread.parentThreadId !== undefined || thread.missingParentThreadId !== undefined
        ? { parentSessionId: thread.parentThreadId ?? thread.missingParentThreadId }
        : {}),
      ...(parentRunId !== undefined ? { parentRunId } : {}),
      ...(parentRunId !== undefined && thread.link?.spawnCallId !== undefined
        ? { parentToolCallId: thread.link.spawnCallId }
        : {}),
    };
    this.#builder = this.#newBuilder();
    this.#copy =
      meta.historyStartOrdinal !== undefined ? { kind: 'ordinal', start: meta.historyStartOrdinal } : { kind: 'none' };
  }

  /** The run's start. */
  get start(): RunStart {
    return this.#start;
  }

  /** Records pushed (line 1 not counted). */
  get records(): number {
    return this.#records;
  }

  /** Of those, records skipped as the copy of a parent's history. */
  get copiedRecords(): number {
    return this.#copied;
  }

  /** `last_agent_message` of the thread's last `task_complete` (`null` when it recorded none; `undefined` when no turn completed). */
  get lastAgentMessage(): string | null | undefined {
    return this.#lastAgentMessage;
  }

  /** What this thread recorded about the children it spawned, by reference. */
  get links(): CodexLinkBook {
    return this.#links;
  }

  #newBuilder(): TranscriptRunBuilder {
    const builder = new TranscriptRunBuilder(this.#start);
    const prompt = this.#thread.link?.prompt;
    if (prompt !== undefined && prompt !== '') {
      builder.prompt([{ type: 'text', text: prompt }]);
      this.#prompted = true;
    }
    return builder;
  }

  /** Folds one record (line 2 onwards). Never throws. */
  push(record: CodexRecord): void {
    this.#records += 1;
    if (this.#isCopied(record)) {
      this.#copied += 1;
      if (record.kind === 'event_msg' && record.event.type === 'token_count' && record.event.total !== undefined)
        this.#baseline = record.event.total;
      return;
    }
    if (Number.isFinite(record.time)) this.#builder.seen(record.time);
    switch (record.kind) {
      case 'turn_context':
        if (record.model !== undefined) this.#model = record.model;
        break;
      case 'response_item':
        this.#item(record.item, record.time);
        break;
      case 'event_msg':
        this.#event(record.event, record.time);
        break;
      default:
        // session_meta of a copy already ended, compacted, record types of newer versions: nothing of a run.
        break;
    }
  }

  /** Whether `record` belongs to a copy of a parent's history; moves the copy's state on. */
  #isCopied(record: CodexRecord): boolean {
    const mode = this.#copy;
    switch (mode.kind) {
      case 'ordinal':
        return record.ordinal !== undefined && record.ordinal < mode.start;
      case 'none':
        if (this.#records === 1 && record.kind === 'session_meta' && record.meta.id !== this.#meta.id) {
          this.#copy = { kind: 'header', since: record.time };
          this.#builder.noteUsage('codex:copied-history-by-time');
          return true;
        }
        return false;
      case 'header':
        if (!Number.isFinite(mode.since) && Number.isFinite(record.time)) {
          this.#copy = { kind: 'header', since: record.time }; // the copied header had no time: the burst is timed from its first timed record
          return true;
        }
        if (isForkedOutput(record)) {
          this.#copy = { kind: 'ended' };
          return true;
        }
        if (!(record.time - mode.since > COPIED_HISTORY_WINDOW_MS)) return true; // within the burst (or no time to judge by)
        this.#copy = { kind: 'ended' };
        return false;
      case 'ended':
        if (isForkedOutput(record)) {
          // The copy ran longer than the window: what was taken for the child's own so far was the copy.
          this.#resetOwn();
          this.#builder.noteUsage('codex:copied-history-late-end');
          return true;
        }
        return false;
    }
  }

  #resetOwn(): void {
    this.#prompted = false;
    this.#builder = this.#newBuilder();
    this.#builder.noteUsage('codex:copied-history-by-time');
    this.#pending = [];
    this.#pendingTime = undefined;
    this.#turn = undefined;
    this.#turns = 0;
    this.#truncation = undefined;
    this.#lastTurnStop = undefined;
    this.#lastAgentMessage = undefined;
    this.#collabCalls.clear();
    this.#links.clear();
  }

  #item(item: CodexResponseItem, time: number): void {
    switch (item.type) {
      case 'message': {
        const relayed = parseCodexInterAgentMessage(item.content);
        if (relayed !== undefined) {
          // A message another agent sent (multi-agent v2), recorded in the assistant role: never this run's output.
          this.#notification(relayed.content);
        } else if (item.role === 'assistant') {
          for (const part of item.content)
            if (part.type === 'output_text' && part.text !== undefined && part.text !== '')
              this.#add({ type: 'text', text: part.text }, time);
        } else {
          for (const part of item.content) if (part.text !== undefined) this.#notification(part.text);
        }
        break;
      }
      case 'reasoning':
        if (item.texts.length > 0) this.#add({ type: 'reasoning', text: item.texts.join('\n') }, time);
        break;
      case 'function_call':
        this.#toolCall(item.callId, item.name, item.arguments, time);
        if (COLLAB_TOOLS.has(item.name)) {
          const target = codexArgument(item.arguments, 'target') ?? codexArgument(item.arguments, 'id');
          const prompt = codexArgument(item.arguments, 'message');
          this.#collabCalls.set(item.callId, {
            name: item.name,
            ...(target !== undefined ? { target } : {}),
            ...(prompt !== undefined ? { prompt } : {}),
          });
        }
        break;
      case 'custom_tool_call':
        this.#toolCall(item.callId, item.name, item.input, time);
        break;
      case 'local_shell_call':
        this.#toolCall(
          item.callId ?? this.#syntheticId('local_shell_call'),
          'local_shell',
          JSON.stringify(item.action ?? null),
          time,
        );
        break;
      case 'tool_search_call':
        this.#toolCall(
          item.callId ?? this.#syntheticId('tool_search_call'),
          'tool_search',
          JSON.stringify(item.arguments ?? null),
          time,
        );
        break;
      case 'web_search_call': {
        // Run by the model provider inside the response: started and finished at once, no output in the file.
        const id = this.#syntheticId('web_search_call');
        this.#toolCall(id, 'web_search', JSON.stringify(item.action ?? null), time);
        this.#builder.toolFinished(id, time, false);
        break;
      }
      case 'function_call_output':
      case 'custom_tool_call_output':
      case 'tool_search_output': {
        if (item.callId === undefined) break;
        const failed = item.output.success === false || isFailedCommandOutput(item.output.text);
        this.#builder.toolFinished(
          item.callId,
          time,
          failed,
          failed ? (item.output.success === false ? 'tool_error' : 'exit_code') : undefined,
        );
        this.#collabOutput(item.callId, item.output.text);
        break;
      }
      case 'other':
        break;
    }
  }

  #syntheticId(kind: string): string {
    this.#syntheticIds += 1;
    return `${kind}-${this.#syntheticIds}`;
  }

  #toolCall(callId: string, name: string, args: string, time: number): void {
    this.#add({ type: 'tool-call', id: callId, name, arguments: args }, time);
    this.#builder.toolStarted(callId, name, time);
  }

  #add(block: ContentBlock, time: number): void {
    if (this.#pendingTime === undefined && Number.isFinite(time)) this.#pendingTime = time;
    this.#pending.push(block);
  }

  #link(reference: string, update: CodexChildLink): void {
    const link = this.#links.get(reference) ?? {};
    this.#links.set(reference, { ...link, ...update });
  }

  #collabOutput(callId: string, text: string): void {
    const call = this.#collabCalls.get(callId);
    if (call === undefined) return;
    this.#collabCalls.delete(callId);
    const output = parseCodexCollabOutput(text, call.target);
    if (output === undefined) return;
    if (call.name === 'spawn_agent' && output.spawned !== undefined)
      this.#link(output.spawned, {
        spawnCallId: callId,
        ...(call.prompt !== undefined ? { prompt: call.prompt } : {}),
      });
    for (const [reference, status] of output.statuses) this.#status(reference, status);
  }

  #status(reference: string, status: CodexAgentStatus): void {
    if (status.kind === 'other') return; // running, interrupted, shutdown, not found: says nothing of how the child ended
    this.#link(reference, { status });
  }

  #notification(text: string): void {
    const notification = parseCodexSubagentNotification(text);
    if (notification !== undefined) this.#status(notification.reference, notification.status);
  }

  #event(event: CodexEvent, time: number): void {
    switch (event.type) {
      case 'token_count':
        if (event.total !== undefined) this.#usage(event.total, event.last, time);
        break;
      case 'task_started':
        this.#flush();
        this.#endOpenTurn();
        this.#turn = { id: event.turnId, error: undefined, end: undefined };
        this.#turns += 1;
        break;
      case 'task_complete': {
        this.#flush();
        const turn = this.#currentTurn(event.turnId);
        turn.end = { reason: 'completed', inferredFrom: 'codex:task_complete' };
        // 0.16x records the error a turn ended on in its task_complete (no separate error event): the same evidence.
        if (event.errorMessage !== undefined && !isTruncation(turn.error))
          turn.error = codexErrorStop(event.errorMessage);
        this.#lastAgentMessage = event.lastAgentMessage ?? null;
        this.#endOpenTurn();
        break;
      }
      case 'turn_aborted': {
        this.#flush();
        const turn = this.#currentTurn(event.turnId);
        turn.end = { reason: 'aborted', inferredFrom: `codex:turn_aborted:${event.reason}` };
        this.#endOpenTurn();
        break;
      }
      case 'error': {
        if (event.errorInfo !== undefined && ERRORS_NOT_AFFECTING_TURN.has(event.errorInfo)) break;
        const turn = this.#currentTurn(undefined);
        const stop = codexErrorStop(event.message, event.errorInfo);
        if (!isTruncation(turn.error)) turn.error = stop;
        break;
      }
      case 'user_message':
        if (!this.#prompted && event.message !== '') {
          this.#builder.prompt([{ type: 'text', text: event.message }]);
          this.#prompted = true;
        }
        break;
      case 'collab_agent_spawn_end':
        if (event.newThreadId !== undefined) this.#link(event.newThreadId, { spawnCallId: event.callId });
        break;
      case 'collab_waiting_end':
        for (const [reference, status] of event.statuses) this.#status(reference, status);
        break;
      case 'collab_close_end':
        if (event.receiverThreadId !== undefined && event.status !== undefined)
          this.#status(event.receiverThreadId, event.status);
        break;
      default:
        // agent_message repeats the assistant message items; other events say nothing of a run.
        break;
    }
  }

  /** The open turn, or an implicit one for records outside any (a file that starts mid-turn, versions that persist no turn events). */
  #currentTurn(turnId: string | undefined): Turn {
    if (this.#turn === undefined) {
      this.#turn = { id: turnId, error: undefined, end: undefined };
      this.#turns += 1;
    }
    return this.#turn;
  }

  /** Closes the open turn: its stop is its recorded error (which a later `task_complete` never overrules), else its end, else unknown. */
  #endOpenTurn(): void {
    const turn = this.#turn;
    if (turn === undefined) return;
    this.#turn = undefined;
    const stop = turn.error ?? turn.end ?? UNKNOWN_STOP;
    if (isTruncation(stop) && this.#truncation === undefined) this.#truncation = stop;
    this.#lastTurnStop = stop;
  }

  #usage(total: CodexTokenUsage, last: CodexTokenUsage | undefined, time: number): void {
    const baseline = this.#baseline;
    if (baseline !== undefined && sameUsage(baseline, total)) return; // a repeated snapshot (a rate-limit update)
    this.#baseline = total;
    if (baseline !== undefined && USAGE_KEYS.some((key) => total[key] < baseline[key])) {
      // Totals that went down (reset to the context window, a rollback): no delta to take.
      this.#builder.noteUsage('codex:usage-total-reset');
      this.#flush();
      return;
    }
    const delta: CodexTokenUsage =
      baseline === undefined
        ? total
        : {
            inputTokens: total.inputTokens - baseline.inputTokens,
            cachedInputTokens: total.cachedInputTokens - baseline.cachedInputTokens,
            outputTokens: total.outputTokens - baseline.outputTokens,
            reasoningOutputTokens: total.reasoningOutputTokens - baseline.reasoningOutputTokens,
            totalTokens: total.totalTokens - baseline.totalTokens,
          };
    if (last !== undefined && !sameUsage(delta, last)) this.#builder.noteUsage('codex:usage-delta-not-last');
    if (this.#model === undefined) this.#builder.noteUsage('codex:model-unknown');
    this.#emit(codexUsage(delta), time);
  }

  /** Emits the pending response items as one call without usage (a response whose usage the file does not record). */
  #flush(): void {
    if (this.#pending.length === 0) return;
    this.#builder.noteUsage('codex:call-without-usage');
    this.#emit(undefined, this.#pendingTime ?? this.#builder.lastTime);
  }

  #emit(usage: TokenUsage | undefined, endTime: number): void {
    const time = this.#pendingTime ?? endTime;
    const call: TranscriptCall = {
      time,
      endTime: Number.isFinite(endTime) ? Math.max(time, endTime) : time,
      content: this.#pending,
      ...(usage !== undefined ? { usage } : {}),
      ...(this.#model !== undefined ? { model: this.#model } : {}),
    };
    this.#pending = [];
    this.#pendingTime = undefined;
    this.#builder.call(call);
  }

  /**
   * Closes the run. Its stop reason is its last turn's (an error recorded in
   * a turn beats that turn's `task_complete`); a truncation recorded in an
   * earlier turn is kept when the last turn ended without an error or
   * abort. Then the parent's report about a child: `completed` where the
   * child's own files say nothing, an error or truncation where they say
   * less. `reported` is the child's text as the parent last received it.
   *
   * @returns the run's record; the reader must not be used after. Never throws.
   */
  finish(): RunRecord {
    this.#flush();
    this.#endOpenTurn();
    const last = this.#lastTurnStop ?? UNKNOWN_STOP;
    const own =
      this.#truncation !== undefined && (last.reason === 'completed' || last.reason === 'unknown')
        ? this.#truncation
        : last;
    this.#builder.noteStop(own);
    const status = this.#thread.link?.status;
    const fromParent = codexParentResultStop(status);
    if (fromParent !== undefined) this.#builder.noteStop(fromParent);
    if (this.#thread.missingParentThreadId !== undefined) this.#builder.noteUsage('codex:parent-file-absent');
    const reported =
      status?.kind === 'completed'
        ? {
            output:
              status.message !== undefined && status.message !== ''
                ? [{ type: 'text' as const, text: status.message }]
                : undefined,
            compare: 'text' as const,
          }
        : undefined;
    return this.#builder.finish({ ...(reported !== undefined ? { reported } : {}) });
  }

  /** Turns begun so far (recorded or implicit). */
  get turns(): number {
    return this.#turns;
  }
}

function isForkedOutput(record: CodexRecord): boolean {
  return (
    record.kind === 'response_item' &&
    record.item.type === 'function_call_output' &&
    record.item.output.text.startsWith(FORKED_OUTPUT_PREFIX)
  );
}
