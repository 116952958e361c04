/**
 * Claude Code sessions read as runs (docs/TRANSCRIPTS.md, "Claude Code";
 * decision 0093): one run per session file, one per subagent, whichever of
 * the three layouts holds its lines (inline `isSidechain` lines in the
 * session file, up to about 2.0.27; its own `agent-<id>.jsonl`, next to the
 * session file or under `<session>/subagents/`), and, when a subagent's own
 * file is not among the files read, the copies of its lines that the
 * parent's `agent_progress` records carry.
 *
 * Owns what the records mean: API responses rebuilt from their one-block
 * lines and counted once, usage in the project's buckets, the link from a
 * Task/Agent tool call to the subagent it started, the subagent's result as
 * the parent received it, and the evidence of how each run ended. Pure of
 * I/O: the replay module (`transcripts/claude-code/files.ts`) feeds it
 * validated records (`transcripts/claude-code/records.ts`) file by file, in the
 * order parent before child, and decides which finished runs to report.
 *
 * Memory: per run, one API response being rebuilt plus what the run's
 * `TranscriptRunBuilder` keeps (bounded by its calls and tool calls); per
 * session, the Task/Agent calls, the message ids already counted and, for
 * the inline layout, the uuid of each sidechain line.
 *
 * @module subagent-otel/transcripts/claude-code/runs
 */
import type { ContentBlock, TokenUsage } from '../../wire/content.js';
import type {
  ClaudeAgentMeta,
  ClaudeAssistantRecord,
  ClaudeBlock,
  ClaudeCodeRecord,
  ClaudeTaskResult,
  ClaudeUsage,
  ClaudeUserRecord,
} from './records.js';
import { parseClaudeTaskResult } from './records.js';
import type { RunRecord, RunStart } from '../../observe/run-record.js';
import { strongerStop, TranscriptRunBuilder, type TranscriptStop } from '../transcript-run.js';

/** The format's name: `source` of its runs, prefix of their ids, agent name of a session's root run. */
export const CLAUDE_CODE = 'claude-code' as const;
/** `gen_ai.provider.name` of every Claude Code call. */
export const CLAUDE_CODE_PROVIDER = 'anthropic' as const;
/** Agent name of a subagent whose type no record names. */
export const DEFAULT_SUBAGENT_NAME = 'subagent' as const;
/** Agent name of an agent a `Workflow` ran, when its sidecar names no type. */
export const WORKFLOW_AGENT_NAME = 'workflow-agent' as const;

/** Where a run's usage is approximate, or how it was read (`RunRecord.usageNotes`; docs/TRANSCRIPTS.md lists each). */
export const CLAUDE_USAGE_NOTES = {
  /** Some of a session's requests never got their final usage on disk: their output tokens are the streaming start's. */
  streamingUsage: 'claude-code:streaming-usage',
  /** The same for a subagent's requests (2.1.38/2.1.39 subagent files never carry final usage). */
  subagentStreamingUsage: 'claude-code:subagent-streaming-usage',
  /** The subagent's last request's usage was completed from the parent's `toolUseResult.usage`. */
  finalUsageFromParent: 'claude-code:subagent-final-usage-from-parent',
  /** The subagent's own file was not read: its run was rebuilt from the parent's `agent_progress` copies of its lines. */
  fromParentProgress: 'claude-code:subagent-from-parent-progress',
  /** Rebuilt from copies that lack the final answer (2.1.38 copies only tool calls): its last call is the parent's `toolUseResult` (content and usage). */
  finalMessageFromParent: 'claude-code:subagent-final-message-from-parent',
  /** Responses already counted in another run of the session (a fork's replay of its parent's history) were skipped. */
  replayedMessagesSkipped: 'claude-code:replayed-messages-skipped',
  /** The subagent's parent session file is not among the files read: its run has no parent. */
  parentSessionAbsent: 'claude-code:parent-session-absent',
} as const;

/** Tool names that start a subagent. */
const DELEGATING_TOOLS: ReadonlySet<string> = new Set(['Task', 'Agent']);
/** The tool that launches a workflow (its agents live under `subagents/workflows/<runId>/`). */
const WORKFLOW_TOOL = 'Workflow';

/** Options of a {@link ClaudeCodeSessionReader}. */
export interface ClaudeSessionOptions {
  /** The session's id as far as the file names tell (`<session>.jsonl`, `<session>/subagents/`, a child's `sessionId`). */
  readonly sessionId: string;
  /** True when `sessionId` is only a file's name, not a UUID: the first record naming a session id replaces it. */
  readonly isSessionIdGuess?: boolean;
  /** Whether the session's own file is read (else every child is a run without a parent). */
  readonly hasMain: boolean;
  /** Agents whose own file is read with the session: their `agent_progress` copies are never used. */
  readonly childFiles: ReadonlySet<string>;
  /** `gen_ai.agent.name` of every run, overriding the reader's own (`--agent-name`). */
  readonly agentName?: string;
  /** Start time of a run none of whose records carries a time (epoch ms; the file's mtime). */
  readonly fallbackTime: number;
}

/** A finished run and whether its files record its end. */
export interface ClaudeRunOutcome {
  readonly record: RunRecord;
  /**
   * The files record that the run ended: for a subagent, the parent's
   * tool_result (or a task notification) for it. Never true for a session's
   * root run, whose file can always grow by another prompt.
   */
  readonly isEnded: boolean;
  /** The file the run's own lines came from: `main` (the session file, its inline and progress-copy children) or the key its child file was started with. */
  readonly fileKey: string;
}

/** A child file being read: returned by {@link ClaudeCodeSessionReader.startChild}. */
export interface ClaudeChildHandle {
  readonly agentId: string;
  readonly fileKey: string;
}

/** A Task/Agent/Workflow call met in some run of the session, and what its parent received for it. */
interface DelegatingCall {
  readonly toolUseId: string;
  readonly tool: string;
  /** The run whose model made the call. */
  readonly parentRunId: string;
  readonly agentType?: string | undefined;
  readonly prompt?: string | undefined;
  outcome?: CallOutcome;
  /** Inline layout: the sidechain thread started for it. */
  thread?: InlineThread;
}

interface CallOutcome {
  readonly result?: ClaudeTaskResult | undefined;
  /** The tool_result's text blocks (the agentId trailer removed). */
  readonly text: readonly ContentBlock[];
  readonly isError: boolean;
  /** The user rejected or interrupted the call (`toolUseResult` "User rejected tool use", or the rejection or interrupt text). */
  readonly isRejected: boolean;
  /** Epoch ms of the tool_result line. */
  readonly time: number;
  /** The latest `<task-notification>` for the agent (background agents): what the parent was told when it stopped. */
  notification?: TaskNotification;
}

/** A `<task-notification>` as the parent received it (Claude Code 2.1.x background agents). */
interface TaskNotification {
  /** `<status>`: `completed`, `failed`, `killed`, ... */
  readonly status: string;
  /** `<summary>`: e.g. `Agent "x" failed: … (error type max_output_tokens)`. */
  readonly summary?: string | undefined;
  /** `<result>`: the agent's answer, partial when it was cut off: what the parent received as its output. */
  readonly result?: string | undefined;
}

/** One API response being rebuilt from its lines. */
interface PendingCall {
  readonly key: string;
  readonly messageId?: string | undefined;
  readonly time: number;
  endTime: number;
  readonly content: ContentBlock[];
  usage?: MutableUsage;
  model?: string | undefined;
  stopReason?: string | undefined;
  readonly uuids: Set<string>;
}

interface MutableUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h?: number;
  thinking?: number;
  isFinal: boolean;
}

/** A sidechain of the inline layout: its run, or none for a Warmup sidechain. */
interface InlineThread {
  readonly run: RunState | undefined;
}

/** One run being read. */
class RunState {
  readonly runId: string;
  readonly isRoot: boolean;
  readonly fileKey: string;
  /** The delegating call, for a subagent linked to one when it started. */
  toolUseId: string | undefined;
  readonly agentId: string | undefined;
  #builder: TranscriptRunBuilder | undefined;
  readonly #start: (time: number) => RunStart;
  pending: PendingCall | undefined;
  /** How the last turn ended, as far as its records say; reset by each new model answer. */
  tail: TranscriptStop | undefined;
  isPrompted = false;
  callsWithoutFinalUsage = 0;
  replaySkipped = 0;
  /** Model of the latest call. */
  lastModel: string | undefined;
  readonly notes: string[] = [];
  #sequence = 0;

  constructor(
    runId: string,
    isRoot: boolean,
    fileKey: string,
    agentId: string | undefined,
    toolUseId: string | undefined,
    start: (time: number) => RunStart,
  ) {
    this.runId = runId;
    this.isRoot = isRoot;
    this.fileKey = fileKey;
    this.agentId = agentId;
    this.toolUseId = toolUseId;
    this.#start = start;
  }

  get isStarted(): boolean {
    return this.#builder !== undefined;
  }

  /** The run's builder, created at `time` on first use. */
  builder(time: number): TranscriptRunBuilder {
    this.#builder ??= new TranscriptRunBuilder(this.#start(time));
    return this.#builder;
  }

  nextSequence(): number {
    this.#sequence += 1;
    return this.#sequence;
  }
}

/**
 * Reads one Claude Code session (its file, its subagents' files and
 * sidecars) into runs. Feed the session file with {@link pushMain}, each
 * child file between {@link startChild} and {@link finishChild}, then call
 * {@link finish} once. Never throws for any record.
 */
export class ClaudeCodeSessionReader {
  readonly #options: ClaudeSessionOptions;
  #sessionId: string;
  #isSessionIdGuess: boolean;
  readonly #meta = new Map<string, ClaudeAgentMeta>();
  readonly #calls = new Map<string, DelegatingCall>();
  /** Agent id → the tool_use that started it (a Task result, an `agent_progress` line, a sidecar). */
  readonly #agentCalls = new Map<string, string>();
  /** Workflow run id → the `Workflow` tool_use that launched it. */
  readonly #workflowCalls = new Map<string, string>();
  /** Message ids of API responses already counted in this session. */
  readonly #counted = new Set<string>();
  readonly #progressRuns = new Map<string, RunState>();
  readonly #threads = new Map<string, InlineThread>();
  #lastThread: InlineThread | undefined;
  readonly #children = new Map<string, RunState>();
  readonly #outcomes: ClaudeRunOutcome[] = [];
  #root: RunState | undefined;

  constructor(options: ClaudeSessionOptions) {
    this.#options = options;
    this.#sessionId = options.sessionId;
    this.#isSessionIdGuess = options.isSessionIdGuess === true;
  }

  /** The session id the runs are named by (a guessed one replaced by the first id a record names). */
  get sessionId(): string {
    return this.#sessionId;
  }

  /** Notes an `agent-<id>.meta.json` sidecar: the agent's type and the tool_use that started it. */
  addMeta(agentId: string, meta: ClaudeAgentMeta): void {
    this.#meta.set(agentId, meta);
  }

  /** Whether a child's delegating call is known yet (its result, a progress line or its sidecar named the agent). */
  isLinked(agentId: string): boolean {
    const toolUseId = this.#agentCalls.get(agentId) ?? this.#meta.get(agentId)?.toolUseId;
    return toolUseId !== undefined && this.#calls.has(toolUseId);
  }

  /** One record of the session file. */
  pushMain(record: ClaudeCodeRecord): void {
    this.#learnSessionId(record);
    if (record.isSidechain === true && record.kind !== 'other') {
      this.#pushInline(record);
      return;
    }
    this.#feed(this.#rootRun(), record);
  }

  /** Starts reading the file of subagent `agentId` (`workflow`: the workflow run it belongs to). */
  startChild(agentId: string, fileKey: string, workflow?: string): ClaudeChildHandle {
    const run = this.#childRun(agentId, fileKey, workflow, undefined);
    this.#children.set(fileKey, run);
    return { agentId, fileKey };
  }

  /** One record of a child file started with {@link startChild}. */
  pushChild(handle: ClaudeChildHandle, record: ClaudeCodeRecord): void {
    const run = this.#children.get(handle.fileKey);
    if (run === undefined) return;
    this.#learnSessionId(record);
    this.#feed(run, record);
  }

  /** Closes the run of a child file. */
  finishChild(handle: ClaudeChildHandle): void {
    const run = this.#children.get(handle.fileKey);
    if (run === undefined) return;
    this.#children.delete(handle.fileKey);
    this.#finishChildRun(run);
  }

  /**
   * Closes every open run (the session's own, its inline and progress-copy
   * children).
   * @returns every run of the session, in the order to report them: each
   *   run after every run nested under it (deepest first), so a session's
   *   root run comes last. Never throws.
   */
  finish(): ClaudeRunOutcome[] {
    for (const run of this.#children.values()) this.#finishChildRun(run);
    this.#children.clear();
    const inline = new Set<RunState>();
    for (const thread of this.#threads.values()) if (thread.run !== undefined) inline.add(thread.run);
    for (const run of inline) this.#finishChildRun(run);
    this.#threads.clear();
    for (const run of this.#progressRuns.values()) this.#finishChildRun(run);
    this.#progressRuns.clear();
    // A session file none of whose records has a time (a snapshot- or summary-only file) holds no run.
    if (this.#root?.isStarted === true) this.#finishRoot(this.#root);
    return emissionOrder(this.#outcomes);
  }

  // ---- runs ---------------------------------------------------------------

  #rootRunId(): string {
    return `${CLAUDE_CODE}:${this.#sessionId}`;
  }

  #traceKey(): string {
    return `${CLAUDE_CODE}:${this.#sessionId}`;
  }

  #rootRun(): RunState {
    if (this.#root !== undefined) return this.#root;
    const root = new RunState(this.#rootRunId(), true, 'main', undefined, undefined, (time) => ({
      runId: this.#rootRunId(),
      source: CLAUDE_CODE,
      agentName: this.#options.agentName ?? CLAUDE_CODE,
      sessionId: this.#sessionId,
      traceKey: this.#traceKey(),
      provider: CLAUDE_CODE_PROVIDER,
      startTime: time,
    }));
    this.#root = root;
    return root;
  }

  /** A subagent's run, named by its agent id (or, inline without one, by its call or first line). */
  #childRun(
    agentId: string | undefined,
    fileKey: string,
    workflow: string | undefined,
    call: DelegatingCall | undefined,
  ): RunState {
    const name = agentId ?? call?.toolUseId ?? `line-${fileKey}`;
    const runId = `${CLAUDE_CODE}:${this.#sessionId}/agent-${name}`;
    const run: RunState = new RunState(runId, false, fileKey, agentId, call?.toolUseId, (time): RunStart =>
      this.#childStart(run, workflow, time),
    );
    return run;
  }

  #childStart(run: RunState, workflow: string | undefined, time: number): RunStart {
    const agentId = run.agentId;
    const meta = agentId !== undefined ? this.#meta.get(agentId) : undefined;
    const toolUseId =
      run.toolUseId ??
      (agentId !== undefined ? this.#agentCalls.get(agentId) : undefined) ??
      meta?.toolUseId ??
      (workflow !== undefined ? this.#workflowCalls.get(workflow) : undefined);
    const call = toolUseId !== undefined ? this.#calls.get(toolUseId) : undefined;
    if (call !== undefined) run.toolUseId = call.toolUseId;
    const parentRunId = call?.parentRunId ?? (this.#options.hasMain ? this.#rootRunId() : undefined);
    if (parentRunId === undefined) note(run, CLAUDE_USAGE_NOTES.parentSessionAbsent);
    const agentName =
      this.#options.agentName ??
      nonEmpty(meta?.agentType) ??
      nonEmpty(call?.agentType) ??
      (workflow !== undefined ? WORKFLOW_AGENT_NAME : DEFAULT_SUBAGENT_NAME);
    const name = run.runId.slice(`${CLAUDE_CODE}:${this.#sessionId}/`.length);
    return {
      runId: run.runId,
      source: CLAUDE_CODE,
      agentName,
      sessionId: `${this.#sessionId}/${name}`,
      parentSessionId: this.#sessionId,
      ...(parentRunId !== undefined ? { parentRunId } : {}),
      ...(parentRunId !== undefined && call !== undefined ? { parentToolCallId: call.toolUseId } : {}),
      traceKey: this.#traceKey(),
      provider: CLAUDE_CODE_PROVIDER,
      startTime: time,
    };
  }

  #learnSessionId(record: ClaudeCodeRecord): void {
    if (!this.#isSessionIdGuess || record.sessionId === undefined || record.sessionId === '') return;
    if (this.#root?.isStarted === true || this.#outcomes.length > 0) return;
    this.#sessionId = record.sessionId;
    this.#isSessionIdGuess = false;
    if (this.#root !== undefined && !this.#root.isStarted) this.#root = undefined;
  }

  // ---- records ------------------------------------------------------------

  /** Folds one record into `run`. */
  #feed(run: RunState, record: ClaudeCodeRecord): void {
    const time = record.time;
    if (time !== undefined) run.builder(time).seen(time);
    switch (record.kind) {
      case 'assistant':
        this.#assistant(run, record, time);
        return;
      case 'user':
        this.#user(run, record, time);
        return;
      case 'system':
        // Both are written when a turn ends: the Stop hooks' summary (Stop hooks never run on a user interrupt,
        // and from 2.1.78 not on an API error either: StopFailure runs instead), and the post-turn duration line.
        if (record.subtype === 'stop_hook_summary')
          run.tail = strongerStop(run.tail, { reason: 'completed', inferredFrom: 'claude-code:stop-hook-summary' });
        else if (record.subtype === 'turn_duration')
          run.tail ??= { reason: 'completed', inferredFrom: 'claude-code:turn-duration' };
        return;
      case 'progress':
        if (record.progressType === 'agent_progress' && record.progressAgentId !== undefined)
          this.#agentProgress(run, record.progressAgentId, record.parentToolUseId, record.copied);
        return;
      case 'other':
        // A background agent's notification that arrived while the session was busy is stored as a queued command (2.1.3xx).
        if (record.queuedPrompt?.includes('<task-notification>') === true) this.#taskNotification(record.queuedPrompt);
        // 2.1.3xx: an agent stopped at its turn limit gets this attachment after its last answer.
        if (record.maxTurnsReached !== undefined) {
          const limit = record.maxTurnsReached.maxTurns;
          run.tail = strongerStop(run.tail, {
            reason: 'error',
            inferredFrom: 'claude-code:max-turns-reached',
            diagnostic: `reached its turn limit${limit !== undefined ? ` (${limit} turns)` : ''}`,
          });
        }
        return;
      default:
        return;
    }
  }

  #assistant(run: RunState, record: ClaudeAssistantRecord, time: number | undefined): void {
    if (record.isApiError) {
      run.tail = strongerStop(run.tail, apiErrorStop(record));
      return;
    }
    // Claude Code's own placeholders ("No response requested.") are no model call and say nothing of the end.
    if (record.isSynthetic) return;
    const messageId = record.messageId;
    const pending = run.pending;
    if (messageId !== undefined && pending?.messageId !== messageId && this.#counted.has(messageId)) {
      // A response already counted (in this run or another): a replayed copy, counted once.
      run.replaySkipped += 1;
      return;
    }
    const at = time ?? run.builder(this.#options.fallbackTime).lastTime;
    // One response per message id (its request id only when it has none): lines of one id never split into two calls.
    const key =
      messageId ?? (record.requestId !== undefined ? `request:${record.requestId}` : `line:${run.nextSequence()}`);
    let call = pending;
    if (call === undefined || call.key !== key) {
      if (call !== undefined) this.#flush(run, call);
      run.tail = undefined; // a new model answer: what ended an earlier attempt no longer ends the run
      call = { key, messageId, time: at, endTime: at, content: [], uuids: new Set() };
      run.pending = call;
      if (messageId !== undefined) this.#counted.add(messageId);
    }
    if (record.uuid !== undefined) {
      if (call.uuids.has(record.uuid)) return; // the same line written twice
      call.uuids.add(record.uuid);
    }
    call.endTime = Math.max(call.endTime, at);
    call.model ??= record.model;
    if (record.model !== undefined) run.lastModel = record.model;
    const builder = run.builder(at);
    for (const block of record.content) {
      const converted = contentBlock(block);
      if (converted.type === 'tool-call') {
        const id = (converted as { id: string }).id;
        if (call.content.some((b) => b.type === 'tool-call' && (b as { id: string }).id === id)) continue;
        builder.toolStarted(id, (converted as { name: string }).name, at);
        this.#noteCall(run, block);
      }
      call.content.push(converted);
    }
    if (record.usage !== undefined) call.usage = mergeUsage(call.usage, record.usage);
    if (record.stopReason !== undefined) {
      call.stopReason = record.stopReason;
      const stop = stopOfReason(record.stopReason);
      if (stop !== undefined) run.tail = stop;
    }
  }

  /** Pushes a rebuilt response into its run. */
  #flush(run: RunState, call: PendingCall, usage: MutableUsage | undefined = call.usage): void {
    if (run.pending === call) run.pending = undefined;
    if (usage !== undefined && !usage.isFinal) run.callsWithoutFinalUsage += 1;
    const finish = call.stopReason !== undefined ? finishKind(call.stopReason) : undefined;
    run.builder(call.time).call({
      time: call.time,
      endTime: call.endTime,
      content: call.content,
      ...(usage !== undefined ? { usage: tokenUsage(usage) } : {}),
      ...(call.model !== undefined ? { model: call.model } : {}),
      ...(finish !== undefined ? { finishReason: finish } : {}),
      ...(call.messageId !== undefined ? { id: call.messageId } : {}),
    });
  }

  /** Registers a Task/Agent/Workflow tool_use made by `run`'s model. */
  #noteCall(run: RunState, block: ClaudeBlock): void {
    const name = block['name'];
    const id = block['id'];
    if (typeof name !== 'string' || typeof id !== 'string' || (!DELEGATING_TOOLS.has(name) && name !== WORKFLOW_TOOL))
      return;
    const input = block['input'];
    const fields = input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : {};
    const agentType = fields['subagent_type'];
    const prompt = fields['prompt'];
    this.#calls.set(id, {
      toolUseId: id,
      tool: name,
      parentRunId: run.runId,
      agentType: typeof agentType === 'string' ? agentType : undefined,
      prompt: typeof prompt === 'string' ? prompt : undefined,
    });
  }

  #user(run: RunState, record: ClaudeUserRecord, time: number | undefined): void {
    const at = time ?? run.builder(this.#options.fallbackTime).lastTime;
    const blocks: readonly ClaudeBlock[] =
      typeof record.content === 'string' ? [{ type: 'text', text: record.content }] : record.content;
    let hasToolResult = false;
    for (const block of blocks) {
      if (block.type === 'tool_result') {
        hasToolResult = true;
        this.#toolResult(run, record, block, at);
      } else if (block.type === 'text' && typeof block['text'] === 'string') {
        const text = block['text'];
        if (text.startsWith('[Request interrupted by user'))
          run.tail = strongerStop(run.tail, { reason: 'aborted', inferredFrom: 'claude-code:interrupted' });
        else if (text.includes('<task-notification>')) this.#taskNotification(text);
      }
    }
    if (!run.isPrompted && !hasToolResult && !record.isMeta && !record.isCompactSummary) {
      const prompt = promptBlocks(blocks);
      if (prompt.length > 0) {
        run.isPrompted = true;
        run.builder(at).prompt(prompt);
      }
    }
  }

  #toolResult(run: RunState, record: ClaudeUserRecord, block: ClaudeBlock, at: number): void {
    const id = block['tool_use_id'];
    if (typeof id !== 'string') return;
    const isError = block['is_error'] === true;
    const text = resultText(block['content']);
    run.builder(at).toolFinished(id, at, isError, isError ? toolErrorType(record.toolUseResult, text) : undefined);
    const call = this.#calls.get(id);
    if (call === undefined) return;
    const result = parseClaudeTaskResult(record.toolUseResult);
    const agentId = result?.agentId ?? trailerAgentId(text);
    const errorType = isError ? toolErrorType(record.toolUseResult, text) : undefined;
    call.outcome = {
      result,
      text: withoutTrailer(text),
      isError,
      isRejected: errorType === 'permission_rejected' || errorType === 'interrupted',
      time: at,
    };
    if (agentId !== undefined && DELEGATING_TOOLS.has(call.tool)) this.#agentCalls.set(agentId, id);
    if (result?.runId !== undefined && call.tool === WORKFLOW_TOOL) this.#workflowCalls.set(result.runId, id);
  }

  /** A `<task-notification>` (a background agent stopped): its status, summary and result for the agent's run; a later one replaces it (a resumed agent notifies again). */
  #taskNotification(text: string): void {
    const notification = parseTaskNotification(text);
    if (notification === undefined) return;
    const toolUseId = this.#agentCalls.get(notification.taskId) ?? notification.toolUseId;
    const outcome = toolUseId !== undefined ? this.#calls.get(toolUseId)?.outcome : undefined;
    if (outcome !== undefined) outcome.notification = notification;
  }

  /** An `agent_progress` line of `parent`: links the agent to its call; its copy feeds the agent's run when the agent's own file is not read. */
  #agentProgress(
    parent: RunState,
    agentId: string,
    toolUseId: string | undefined,
    copied: ClaudeAssistantRecord | ClaudeUserRecord | undefined,
  ): void {
    if (toolUseId !== undefined && this.#calls.has(toolUseId) && !this.#agentCalls.has(agentId))
      this.#agentCalls.set(agentId, toolUseId);
    if (copied === undefined || this.#options.childFiles.has(agentId)) return;
    let run = this.#progressRuns.get(agentId);
    if (run === undefined) {
      run = this.#childRun(
        agentId,
        parent.fileKey,
        undefined,
        toolUseId !== undefined ? this.#calls.get(toolUseId) : undefined,
      );
      note(run, CLAUDE_USAGE_NOTES.fromParentProgress);
      this.#progressRuns.set(agentId, run);
    }
    this.#feed(run, copied);
  }

  /** A sidechain line of the inline layout: to the sidechain's run, found by its `parentUuid` chain. */
  #pushInline(record: ClaudeCodeRecord): void {
    let thread =
      record.parentUuid !== undefined && record.parentUuid !== null ? this.#threads.get(record.parentUuid) : undefined;
    // A user line that continues no sidechain line starts a sidechain; any other line without one belongs to the latest.
    if (thread === undefined && record.kind === 'user') thread = this.#startThread(record);
    thread ??= this.#lastThread;
    if (thread === undefined) return;
    if (record.uuid !== undefined) this.#threads.set(record.uuid, thread);
    this.#lastThread = thread;
    if (thread.run !== undefined) this.#feed(thread.run, record);
  }

  /** The first line of an inline sidechain: a Warmup (no run) or the task of a Task call not yet matched. */
  #startThread(record: ClaudeUserRecord): InlineThread {
    const text = userText(record);
    if (text.trim() === 'Warmup') return { run: undefined };
    // A call that already has its result (interrupted before its agent started) runs no sidechain after it.
    const open = [...this.#calls.values()].filter(
      (c) =>
        DELEGATING_TOOLS.has(c.tool) &&
        c.thread === undefined &&
        c.outcome === undefined &&
        c.parentRunId === this.#rootRunId(),
    );
    const call = open.find((c) => c.prompt !== undefined && c.prompt === text) ?? open[0];
    const run = this.#childRun(record.agentId, 'main', undefined, call);
    const thread: InlineThread = { run };
    if (call !== undefined) call.thread = thread;
    return thread;
  }

  // ---- ends ---------------------------------------------------------------

  #finishChildRun(run: RunState): void {
    const builder = run.builder(this.#options.fallbackTime);
    const toolUseId = run.toolUseId ?? (run.agentId !== undefined ? this.#agentCalls.get(run.agentId) : undefined);
    const call = toolUseId !== undefined ? this.#calls.get(toolUseId) : undefined;
    const outcome = call?.outcome;
    const pending = run.pending;
    const parentUsage = outcome?.result?.usage;
    let isReconciled = false;
    if (pending !== undefined) {
      const reconciled = parentUsage !== undefined ? reconcile(pending.usage, parentUsage) : undefined;
      if (reconciled !== undefined) {
        note(run, CLAUDE_USAGE_NOTES.finalUsageFromParent);
        isReconciled = true;
      }
      this.#flush(run, pending, reconciled ?? pending.usage);
    }
    const finalContent = outcome?.result?.content;
    if (
      outcome !== undefined &&
      run.notes.includes(CLAUDE_USAGE_NOTES.fromParentProgress) &&
      !isReconciled &&
      !outcome.isError &&
      finalContent !== undefined &&
      outcome.result?.status !== 'async_launched'
    ) {
      // The copies stop before the answer; the parent's result holds it (the last response's text and final usage).
      note(run, CLAUDE_USAGE_NOTES.finalMessageFromParent);
      if (parentUsage !== undefined) note(run, CLAUDE_USAGE_NOTES.finalUsageFromParent);
      this.#flush(
        run,
        {
          key: 'parent-result',
          time: outcome.time,
          endTime: outcome.time,
          content: resultText(finalContent),
          model: run.lastModel,
          uuids: new Set(),
        },
        parentUsage !== undefined ? { ...mergeUsage(undefined, parentUsage), isFinal: true } : undefined,
      );
    }
    if (run.callsWithoutFinalUsage > 0) note(run, CLAUDE_USAGE_NOTES.subagentStreamingUsage);
    if (run.replaySkipped > 0) note(run, CLAUDE_USAGE_NOTES.replayedMessagesSkipped);
    if (run.tail !== undefined) builder.noteStop(run.tail);
    const parentStop = outcome !== undefined ? stopOfOutcome(outcome) : undefined;
    if (parentStop !== undefined) builder.noteStop(parentStop);
    for (const n of run.notes) builder.noteUsage(n);
    const reported = outcome !== undefined ? reportedOf(outcome) : undefined;
    const record = builder.finish(reported !== undefined ? { reported: { output: reported, compare: 'text' } } : {});
    this.#outcomes.push({ record, isEnded: parentStop !== undefined, fileKey: run.fileKey });
  }

  #finishRoot(run: RunState): void {
    const builder = run.builder(this.#options.fallbackTime);
    if (run.pending !== undefined) this.#flush(run, run.pending);
    if (run.callsWithoutFinalUsage > 0) note(run, CLAUDE_USAGE_NOTES.streamingUsage);
    if (run.replaySkipped > 0) note(run, CLAUDE_USAGE_NOTES.replayedMessagesSkipped);
    if (run.tail !== undefined) builder.noteStop(run.tail);
    for (const n of run.notes) builder.noteUsage(n);
    this.#outcomes.push({ record: builder.finish(), isEnded: false, fileKey: run.fileKey });
  }
}

// ---- pure helpers -----------------------------------------------------------

function note(run: RunState, value: string): void {
  if (!run.notes.includes(value)) run.notes.push(value);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value !== '' ? value : undefined;
}

/** Runs ordered so that every run comes after the runs nested under it (deepest first, reading order within a depth). */
function emissionOrder(outcomes: readonly ClaudeRunOutcome[]): ClaudeRunOutcome[] {
  const parentOf = new Map(outcomes.map((o) => [o.record.runId, o.record.parentRunId]));
  const depth = (runId: string): number => {
    let d = 0;
    let current = parentOf.get(runId);
    const seen = new Set<string>([runId]);
    while (current !== undefined && !seen.has(current)) {
      seen.add(current);
      d += 1;
      current = parentOf.get(current);
    }
    return d;
  };
  return outcomes
    .map((outcome, index) => ({ outcome, index, depth: depth(outcome.record.runId) }))
    .sort((a, b) => b.depth - a.depth || a.index - b.index)
    .map((e) => e.outcome);
}

/**
 * One Anthropic content block as a project block: `text` as is, `thinking`
 * and `redacted_thinking` as `reasoning`, `tool_use` and `server_tool_use`
 * as `tool-call` (input as JSON text), any other block kept verbatim.
 */
function contentBlock(block: ClaudeBlock): ContentBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: typeof block['text'] === 'string' ? block['text'] : '' };
    case 'thinking':
      return { type: 'reasoning', text: typeof block['thinking'] === 'string' ? block['thinking'] : '' };
    case 'redacted_thinking':
      return { type: 'reasoning', text: '' };
    case 'tool_use':
    case 'server_tool_use': {
      const id = typeof block['id'] === 'string' ? block['id'] : '';
      const name = typeof block['name'] === 'string' ? block['name'] : '';
      return { type: 'tool-call', id, name, arguments: JSON.stringify(block['input'] ?? {}) };
    }
    default:
      return block;
  }
}

/** A user message's blocks as the run's prompt: text and images, never tool results. */
function promptBlocks(blocks: readonly ClaudeBlock[]): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const block of blocks) {
    if (block.type === 'text' && typeof block['text'] === 'string' && block['text'] !== '')
      out.push({ type: 'text', text: block['text'] });
    else if (block.type === 'image') out.push({ type: 'image', attachment: block['source'] });
  }
  return out;
}

function userText(record: ClaudeUserRecord): string {
  if (typeof record.content === 'string') return record.content;
  return record.content.map((b) => (b.type === 'text' && typeof b['text'] === 'string' ? b['text'] : '')).join('');
}

/** A tool_result's content (a string or blocks) as text blocks. */
function resultText(content: unknown): ContentBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const out: ContentBlock[] = [];
  for (const block of content as unknown[]) {
    if (block !== null && typeof block === 'object' && (block as { type?: unknown }).type === 'text') {
      const text = (block as { text?: unknown }).text;
      if (typeof text === 'string') out.push({ type: 'text', text });
    }
  }
  return out;
}

/** The trailer Claude Code appends to a subagent's tool_result text (`agentId: a881341 (for resuming …)` and a `<usage>` block). */
const TRAILER = /^agentId: ([\w-]+)/;
const INLINE_TRAILER = /\n+agentId: [\w-]+ \([^)\n]*\)(?:\n<usage>[\s\S]*<\/usage>)?\s*$/;

function trailerAgentId(text: readonly ContentBlock[]): string | undefined {
  for (const block of text) {
    const match = /(?:^|\n)agentId: ([\w-]+)/.exec((block as { text: string }).text);
    if (match?.[1] !== undefined) return match[1];
  }
  return undefined;
}

/** The tool_result text without the agentId trailer: the block holding only it dropped, or its tail cut from the last block. */
function withoutTrailer(text: readonly ContentBlock[]): ContentBlock[] {
  const out = text.filter((b) => !TRAILER.test((b as { text: string }).text));
  const last = out[out.length - 1] as { type: 'text'; text: string } | undefined;
  if (last !== undefined && INLINE_TRAILER.test(last.text))
    out[out.length - 1] = { type: 'text', text: last.text.replace(INLINE_TRAILER, '') };
  return out;
}

function toolErrorType(toolUseResult: unknown, text: readonly ContentBlock[]): string {
  const first = (text[0] as { text?: string } | undefined)?.text ?? '';
  if (toolUseResult === 'User rejected tool use' || first.startsWith("The user doesn't want to proceed"))
    return 'permission_rejected';
  if (first.startsWith('[Request interrupted by user')) return 'interrupted';
  return 'tool_error';
}

/**
 * What the parent received as the subagent's output: for a background agent
 * the `<result>` of its task notification; else `toolUseResult.content`'s
 * text, else the tool_result's text without its trailer.
 */
function reportedOf(outcome: CallOutcome): ContentBlock[] | undefined {
  const delivered = deliveredOf(outcome);
  return delivered !== undefined ? withoutHarnessMarks(delivered) : undefined;
}

function deliveredOf(outcome: CallOutcome): ContentBlock[] | undefined {
  const notified = outcome.notification?.result;
  if (notified !== undefined) return notified === '' ? [] : [{ type: 'text', text: notified }];
  if (outcome.isError || outcome.result?.status === 'async_launched' || outcome.result?.status === 'teammate_spawned')
    return undefined;
  // 2.1.3xx frames the report the model is handed; the report inside the frame is what was delivered.
  const framed = handBackReport(outcome.text);
  if (framed !== undefined) return [{ type: 'text', text: framed }];
  const content = outcome.result?.content;
  if (content !== undefined) return resultText(content);
  return outcome.text.length > 0 ? [...outcome.text] : undefined;
}

/** The marker 2.1.210+ puts before a report its scanner flagged (its own text block, or the first line of a string report). */
const FLAGGED_MARKER = '[harness: subagent output matched instruction-shaped pattern(s):';
/** Starts the note 2.1.25x+ puts after a report its hand-back review cut; it and what follows are not the report. */
const CUT_NOTE = "[harness: the subagent's report was cut from";

/**
 * The report as the subagent wrote it, from what the parent received,
 * undoing what Claude Code's harness added (docs/TRANSCRIPTS.md, "Parity"):
 * the flagged-report marker (a block, or a first line) is dropped; the
 * backslash its scanner put after a control tag's `<` (`<\system-reminder>`,
 * `<\/system-reminder>`) and in `Human\:` / `Assistant\:` is taken out; a
 * cut report ends where the cut note starts (the report stays cut: a shorter
 * text, a mismatch). Pure.
 */
export function withoutHarnessMarks(blocks: readonly ContentBlock[]): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const [index, block] of blocks.entries()) {
    if (block.type !== 'text' || typeof block.text !== 'string') {
      out.push(block);
      continue;
    }
    let text = block.text;
    if (index === 0 && text.startsWith(FLAGGED_MARKER)) {
      const newline = text.indexOf('\n');
      if (blocks.length > 1 || newline === -1) continue;
      text = text.slice(newline + 1);
    }
    const cut = text.indexOf(CUT_NOTE);
    if (cut !== -1) {
      const kept = text.slice(0, cut).replace(/\s+$/, '');
      if (kept !== '') out.push({ type: 'text', text: unneutralised(kept) });
      break;
    }
    out.push({ type: 'text', text: unneutralised(text) });
  }
  return out;
}

function unneutralised(text: string): string {
  return text.replace(/<\\(\/?[A-Za-z])/g, '<$1').replace(/\b(Human|Assistant)\\:/g, '$1:');
}

/** Ends the hand-back frame's preamble; the report follows on the next line. */
const HAND_BACK_START = '[Subagent hand-back]';
const HAND_BACK_REPORT = 'The report follows:\n';

/**
 * The report inside Claude Code 2.1.3xx's hand-back frame (`[Subagent
 * hand-back] … The report follows:` then every line of the report indented
 * by two spaces, then the agentId trailer), the indent taken off each line;
 * `undefined` when the tool_result text has no such frame. The trailer is
 * already gone (`withoutTrailer`). Pure; the normalisation docs/TRANSCRIPTS.md
 * lists for parity.
 */
export function handBackReport(text: readonly ContentBlock[]): string | undefined {
  const joined = text.map((b) => (b as { text?: string }).text ?? '').join('');
  if (!joined.startsWith(HAND_BACK_START)) return undefined;
  const at = joined.indexOf(HAND_BACK_REPORT);
  if (at === -1) return undefined;
  return joined
    .slice(at + HAND_BACK_REPORT.length)
    .split('\n')
    .map((line) => (line.startsWith('  ') ? line.slice(2) : line))
    .join('\n')
    .replace(/\n+$/, '');
}

/** How the parent's records say the subagent ended, when they do. */
function stopOfOutcome(outcome: CallOutcome): TranscriptStop | undefined {
  const notification = outcome.notification;
  if (notification !== undefined) {
    const status = notification.status;
    const id = `claude-code:task-notification:${idPart(status)}`;
    const diagnostic =
      notification.summary !== undefined && notification.summary !== '' ? { diagnostic: notification.summary } : {};
    if (status === 'completed') return { reason: 'completed', inferredFrom: id };
    if (status === 'failed' || status === 'error') {
      // 2.1.3xx: an agent cut off at its output limit (after its retries) fails with `(error type max_output_tokens)`.
      if (notification.summary !== undefined && isOutputLimitText(notification.summary)) {
        return { reason: 'max-tokens', inferredFrom: `${id}:max_output_tokens`, ...diagnostic };
      }
      return { reason: 'error', inferredFrom: id, ...diagnostic };
    }
    if (status === 'killed' || status === 'stopped' || status === 'cancelled')
      return { reason: 'aborted', inferredFrom: id };
    return undefined;
  }
  if (outcome.isError) {
    const text = outcome.text.map((b) => (b as { text: string }).text).join('\n');
    // 2.1.3xx: a foreground agent cut off at its output limit (after its retries) is an error result naming the limit.
    if (isOutputLimitText(text))
      return { reason: 'max-tokens', inferredFrom: 'claude-code:parent-result:max_output_tokens', diagnostic: text };
    if (/interrupted/i.test(text)) return { reason: 'aborted', inferredFrom: 'claude-code:parent-result:interrupted' };
    // The user stopped the call while the agent ran: the parent gets the rejection text ("The user doesn't want to proceed…").
    if (outcome.isRejected) return { reason: 'aborted', inferredFrom: 'claude-code:parent-result:rejected' };
    return {
      reason: 'error',
      inferredFrom: 'claude-code:parent-result:error',
      ...(text !== '' ? { diagnostic: text } : {}),
    };
  }
  const status = outcome.result?.status;
  if (status === 'completed') return { reason: 'completed', inferredFrom: 'claude-code:parent-result:completed' };
  // Versions without a status (or a result that is not structured): a result that is no error is what the parent received as the answer.
  if (status === undefined && (outcome.result?.content !== undefined || outcome.text.length > 0))
    return { reason: 'completed', inferredFrom: 'claude-code:parent-result:returned' };
  return undefined;
}

/** Whether an error text says the model's output limit cut the agent off (`(error type max_output_tokens)`, `exceeded the N output token maximum`). */
function isOutputLimitText(text: string): boolean {
  return /\(error type max_output_tokens\)/.test(text) || /exceeded the \d+ output token maximum/.test(text);
}

/**
 * A `<task-notification>` block's fields, as Claude Code writes it into the
 * parent's user line (`<task-id>`, `<tool-use-id>`, `<status>`, `<summary>`,
 * `<result>`), or `undefined` without a task id and status. Pure.
 */
export function parseTaskNotification(
  text: string,
): (TaskNotification & { readonly taskId: string; readonly toolUseId?: string | undefined }) | undefined {
  const block = /<task-notification>([\s\S]*?)<\/task-notification>/.exec(text)?.[1] ?? text;
  const field = (name: string): string | undefined => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(block)?.[1];
  const taskId = field('task-id')?.trim();
  const status = field('status')?.trim();
  if (taskId === undefined || status === undefined) return undefined;
  return {
    taskId,
    status,
    toolUseId: field('tool-use-id')?.trim(),
    summary: field('summary')?.trim(),
    result: field('result'),
  };
}

/** Evidence of a synthetic API error record: `max-tokens` for an output-limit cut, `error` with the text as diagnostic otherwise. */
function apiErrorStop(record: ClaudeAssistantRecord): TranscriptStop {
  const text = record.content
    .map((b) => (b.type === 'text' && typeof b['text'] === 'string' ? b['text'] : ''))
    .join('')
    .trim();
  const diagnostic = text !== '' ? { diagnostic: text } : {};
  if (record.error === 'max_output_tokens' || /exceeded the \d+ output token maximum/.test(text)) {
    return { reason: 'max-tokens', inferredFrom: 'claude-code:api-error:max_output_tokens', ...diagnostic };
  }
  const what =
    record.error !== undefined
      ? idPart(record.error)
      : text.includes('context window limit')
        ? 'model_context_window_exceeded'
        : 'unknown';
  return { reason: 'error', inferredFrom: `claude-code:api-error:${what}`, ...diagnostic };
}

/** Evidence of a recorded `stop_reason`; none for `tool_use` and `pause_turn` (the run goes on). */
function stopOfReason(reason: string): TranscriptStop | undefined {
  const inferredFrom = `claude-code:stop_reason:${idPart(reason)}`;
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return { reason: 'completed', inferredFrom };
    case 'max_tokens':
      return { reason: 'max-tokens', inferredFrom };
    case 'refusal':
      return { reason: 'refusal', inferredFrom };
    case 'model_context_window_exceeded':
      return { reason: 'error', inferredFrom };
    default:
      return undefined;
  }
}

/** A call's finish kind in dsh words. */
function finishKind(reason: string): string {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool-calls';
    case 'max_tokens':
      return 'max-tokens';
    default:
      return reason;
  }
}

/** A value from a file used in an id: word characters, dots and dashes, at most 64. */
function idPart(value: string): string {
  return value.replace(/[^\w.-]/g, '_').slice(0, 64);
}

/** Per field, the largest count seen over a response's lines (usage only grows within one). */
function mergeUsage(current: MutableUsage | undefined, next: ClaudeUsage): MutableUsage {
  const merged: MutableUsage = {
    input: Math.max(current?.input ?? 0, next.input_tokens ?? 0),
    output: Math.max(current?.output ?? 0, next.output_tokens ?? 0),
    cacheRead: Math.max(current?.cacheRead ?? 0, next.cache_read_input_tokens ?? 0),
    cacheWrite: Math.max(current?.cacheWrite ?? 0, next.cache_creation_input_tokens ?? 0),
    isFinal: (current?.isFinal ?? false) || next.isFinal,
  };
  const longWrite = maxDefined(current?.cacheWrite1h, next.ephemeral_1h_input_tokens);
  if (longWrite !== undefined) merged.cacheWrite1h = longWrite;
  const thinking = maxDefined(current?.thinking, next.thinking_tokens);
  if (thinking !== undefined) merged.thinking = thinking;
  return merged;
}

function maxDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

/**
 * The subagent's last response's usage completed from the parent's
 * `toolUseResult.usage` (its final usage), when they are the same request
 * (same input, cache-read and cache-write counts) and the child's lacks the
 * final figures. @returns `undefined` when they do not match or nothing is missing.
 */
function reconcile(child: MutableUsage | undefined, parent: ClaudeUsage): MutableUsage | undefined {
  if (child === undefined || child.isFinal) return undefined;
  const same =
    child.input === (parent.input_tokens ?? 0) &&
    child.cacheRead === (parent.cache_read_input_tokens ?? 0) &&
    child.cacheWrite === (parent.cache_creation_input_tokens ?? 0);
  if (!same) return undefined;
  return { ...mergeUsage(child, parent), isFinal: true };
}

/** Usage in the project's buckets: `input_tokens` is Anthropic's uncached input, `output_tokens` includes thinking. */
function tokenUsage(usage: MutableUsage): TokenUsage {
  return {
    inputTokens: usage.input,
    outputTokens: usage.output,
    cacheReadTokens: usage.cacheRead,
    cacheWriteTokens: usage.cacheWrite,
    ...(usage.cacheWrite1h !== undefined ? { cacheWrite1hTokens: usage.cacheWrite1h } : {}),
    ...(usage.thinking !== undefined ? { reasoningTokens: usage.thinking } : {}),
  };
}
