/**
 * The shapes every run tracker produces and every telemetry sink consumes:
 * `RunStart` when a run opens, `RunRecord` when it closes, and the
 * `RunListener` that receives them. Owns no behaviour; trackers in this folder
 * fill these in, `telemetry/` turns them into spans and metrics.
 *
 * @module subagent-otel/observe/run-record
 */
import type { ContentBlock, TokenUsage } from '../wire/content.js';
import type { OutputSource } from '../output/assistant-output.js';
import type { SubagentStopReason } from '../output/stop-reason.js';

/**
 * Where a run was observed: the SDK runtime's protocol (`sdk`, its in-runtime
 * children `sdk-subagent`), ACP, a durable session log (`log`), or a coding
 * agent's own transcript on disk (`claude-code`, `codex`, `gemini-cli`).
 */
export type RunSource = 'sdk' | 'sdk-subagent' | 'acp' | 'log' | NativeTranscriptFormat;

/** The coding agents whose transcripts on disk `replay` and `watch` read (docs/TRANSCRIPTS.md). */
export type NativeTranscriptFormat = 'claude-code' | 'codex' | 'gemini-cli';

/** Token totals of a run: sums over every assistant message, empty ones included. As in dsh: disjoint input buckets, `reasoningTokens` a part of `outputTokens`. */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** False when no message of the run reported usage at all (ACP without usage): telemetry then records no token numbers. */
  reported: boolean;
}

/** Identity and timing of a run as known when it opens. */
export interface RunStart {
  readonly runId: string;
  readonly source: RunSource;
  /** Low-cardinality label: provider or configured name. */
  readonly agentName: string;
  /** Child (or prompted) session id; `gen_ai.conversation.id`. */
  readonly sessionId?: string;
  /** Session that delegated this run, when known. */
  readonly parentSessionId?: string;
  /** Run id whose span this run nests under (an in-runtime subagent under the prompting turn). */
  readonly parentRunId?: string;
  /**
   * The parent run's tool call that delegated this run (a Task/Agent
   * `tool_use`, a `spawn_agent` call): the run span nests under that tool
   * call's `execute_tool` span rather than directly under the parent run's.
   * Only with `parentRunId`.
   */
  readonly parentToolCallId?: string;
  /**
   * Names the trace this run belongs to (the root session of a transcript).
   * A run that names one gets span and trace ids derived from its run id and
   * this key when telemetry is this package's own pipeline, so a file read
   * again gives the same ids, and its parent's span (or parent tool span)
   * is found by its derived id even when that span was never started in
   * this process (decision 0093). Absent: random ids, parents looked up
   * among open and recently closed runs.
   */
  readonly traceKey?: string;
  /**
   * This run is the later part of run `continuesRunId`, which was reported
   * before its files grew again (`watch`: a session taken up after its idle
   * close). Its tool spans take that run's derived ids, so runs it delegates
   * (whose `parentRunId` is that run) nest under them. Only with `traceKey`.
   */
  readonly continuesRunId?: string;
  /** W3C `traceparent` handed in (environment, ACP `_meta`); parents the run span when no parent run exists. */
  readonly traceparent?: string;
  /** W3C `tracestate` handed in with `traceparent`. */
  readonly tracestate?: string;
  /** Epoch milliseconds. */
  readonly startTime: number;
  /**
   * The run executes inside the process its parent span already stands for
   * (an in-runtime subagent): its span is INTERNAL rather than CLIENT.
   */
  readonly inProcess?: boolean;
  /** Model provider, when known at start. */
  readonly provider?: string;
  /**
   * Subagent provider that ran the child (`spawn`, `fork`, ...), when the
   * source tells (`subagent.finished.provider`, a log's `subagent/descriptor`).
   * Not a model provider: never `gen_ai.provider.name`.
   */
  readonly subagentProvider?: string;
  /** Requested model, when known at start. */
  readonly model?: string;
  /**
   * The prompt the run was given, when known at start: the `session/prompt`
   * content blocks (SDK), the ACP prompt blocks. In a `RunRecord`, else the
   * content of the run's first `user/message` (the inserted user message of
   * a durable log, an in-runtime subagent's task). Content: telemetry records
   * it under the content policy only.
   */
  readonly prompt?: readonly ContentBlock[];
}

/** One model call of a run. */
export interface StepRecord {
  readonly turn?: number;
  readonly step: number;
  /** Epoch milliseconds. */
  readonly startTime: number;
  readonly endTime: number;
  readonly model?: string;
  /** Usage reported by this step's message, absent when none. */
  readonly usage?: TokenUsage;
  /** Raw finish kind of the step's stream (`stop`, `tool-calls`, `max-tokens`, ...), when seen. */
  readonly finishReason?: string;
}

/** One tool call of a run. */
export interface ToolCallRecord {
  readonly callId: string;
  /**
   * The tool's own name as the runtime or agent reports it (`read_file`,
   * `Bash`). Absent when the agent names none: codex-acp and gemini-cli send
   * only a human title (a command line, a path), kept in `title` and never
   * used as a name (decision 0048).
   */
  readonly name?: string;
  /** Epoch milliseconds. */
  readonly startTime: number;
  /** Absent when the run ended before the tool finished. */
  readonly endTime?: number;
  readonly isError: boolean;
  /** Low-cardinality error class for failed tools (`tool_error`, an error `code`, `unfinished`, `permission_rejected`, `permission_cancelled`). */
  readonly errorType?: string;
  /** ACP: the tool `kind` (`read`, `edit`, `execute`, ...), when reported. */
  readonly toolType?: string;
  /** ACP: the tool call's latest human-readable title, when reported. */
  readonly title?: string;
  /** ACP: the agent asked the client for permission to run this call, and what the client answered. */
  readonly permission?: ToolPermission;
}

/** A permission request about a tool call and its answer. */
export interface ToolPermission {
  /**
   * The selected option's kind (`allow_once`, `allow_always`, `reject_once`,
   * `reject_always`), `selected` for an option of no known kind, `cancelled`,
   * `error` when the client answered with an error, `pending` when no answer
   * came before the run ended.
   */
  readonly outcome: string;
  /** Id of the selected option, when one was selected. */
  readonly optionId?: string;
}

/**
 * Where a run's token usage was read from (ACP): `PromptResponse.usage` as the
 * turn's figures, the difference of two session totals, or `_meta.quota`.
 */
export type UsageOrigin = 'prompt-response' | 'prompt-response-session-delta' | 'meta-quota' | 'agent-telemetry';

/** An ACP failure answer: the JSON-RPC error of the prompt, or the error of a draft-v2 idle state. */
export interface RunRpcError {
  readonly code: number;
  /** The error's text (`message`, with `data.message` when that says more), capped to 4096 UTF-8 bytes; raw, not yet redacted. */
  readonly message: string;
}

/**
 * Where a transcript run worked, as its files record it: Claude Code's
 * `cwd` and `gitBranch` on its lines, Codex's `session_meta` `cwd` and `git`.
 * Emitted only with the team attributes turned on (decision 0124).
 */
export interface RunWorkspace {
  /** The session's working directory. */
  readonly cwd?: string;
  /** The git branch checked out there, as the agent recorded it. */
  readonly branch?: string;
  /** The repository's remote URL, as the agent recorded it (Codex). */
  readonly repositoryUrl?: string;
}

/** Everything known about a closed run. Bounded by the run's output, steps and tool calls, never by its event count. */
export interface RunRecord extends RunStart {
  /** Epoch milliseconds. */
  readonly endTime: number;
  readonly stopReason: SubagentStopReason;
  /** Provider-authored or infrastructure failure detail, capped; never assistant text. */
  readonly diagnostic?: string;
  /** The one rule's selection; `undefined` when the child produced no output. */
  readonly output: readonly ContentBlock[] | undefined;
  readonly outputSource: OutputSource;
  /** Empty-content assistant messages the rule skipped. */
  readonly emptyMessages: number;
  readonly usage: UsageTotals;
  readonly steps: readonly StepRecord[];
  readonly toolCalls: readonly ToolCallRecord[];
  /**
   * What the runtime itself reported as the child's output (`subagent.finished.lastAssistantMessage`),
   * when it reported anything: `{ output: undefined }` means the field was absent from a report.
   * Absent when the source reports nothing (prompt turns, ACP).
   */
  readonly reported?: {
    readonly output: readonly ContentBlock[] | undefined;
    /**
     * How the report is compared with the selection (`reportedOutputMatches`):
     * `blocks` (default) as JSON; `text` by the text alone, for parents that
     * receive only the child's text (transcripts: a Task or spawn result);
     * `answer` by that text against the child's answer, which a child may
     * hand over as its last tool call's `result` argument (Gemini CLI).
     */
    readonly compare?: 'blocks' | 'text' | 'answer';
  };
  /**
   * Where the stop reason came from when it was not reported as such: the id
   * of the ACP truncation signature that turned the agent's answer into
   * `max-tokens`, or, for transcripts, the record that says how the run
   * ended (`claude-code:api-error:max_output_tokens`,
   * `claude-code:parent-result:completed`, ...), or `none` when the file
   * says nothing (stop reason `unknown`). Absent when the stop reason was
   * reported.
   */
  readonly stopReasonInferredFrom?: string;
  /** ACP: the failure the agent answered the turn with, when it answered one. */
  readonly rpcError?: RunRpcError;
  /** ACP: where `usage` came from, when it was reported. */
  readonly usageOrigin?: UsageOrigin;
  /**
   * With `proxy --agent-telemetry`: whether the agent's own telemetry about
   * this run came (`joined`) or not within the wait (`none`: the run is
   * reported from the wire alone). Absent without the flag.
   */
  readonly agentTelemetry?: 'joined' | 'none';
  /** ACP: session usage totals an agent reported that could not be turned into this run's figures (`usage` then has none). */
  readonly sessionUsageTotals?: { readonly inputTokens: number; readonly outputTokens: number };
  /** ACP `usage_update`: tokens in the context window and its size, as last reported during the run. Not token usage. */
  readonly contextWindow?: { readonly used: number; readonly size: number };
  /** ACP `usage_update` cost: cumulative over the whole session (not this run), as last reported during the run. */
  readonly sessionCost?: { readonly amount: number; readonly currency: string };
  /** Transcript runs: where the session worked (decision 0124). */
  readonly workspace?: RunWorkspace;
  /**
   * What the run's token usage cost, priced from a maintained price table by
   * the model each call names (replay and watch of transcripts). Absent when
   * nothing was priced.
   */
  readonly cost?: RunCost;
  /**
   * Transcripts, on a session's root run: the cost of the whole session, this
   * run's own plus every run nested under it that ended before it. Absent
   * when nothing of it was priced.
   */
  readonly sessionTotalCost?: RunCost;
  /**
   * Transcripts: how the usage was read and where it is approximate (for
   * example `claude-code:subagent-final-usage-from-parent`), in the order
   * the reader met them. Absent when the figures are exact as recorded.
   */
  readonly usageNotes?: readonly string[];
}

/** A run's cost in a currency. */
export interface RunCost {
  /** The priced calls' sum; 0 with `pricedCalls` 0 means unknown, not free. */
  readonly amount: number;
  /** ISO 4217 code; the price table is in `USD`. */
  readonly currency: string;
  /**
   * Models whose calls could not be priced (not in the price table); their
   * tokens are not in `amount`. Empty when every priced call's model was known.
   */
  readonly unpricedModels: readonly string[];
  /** Calls (or, for a run without per-call usage, the run) that were priced. */
  readonly pricedCalls: number;
}

/**
 * Receives runs as trackers open and close them. Implementations must not throw;
 * trackers call them synchronously and in order: `onRunStart` before the matching
 * `onRunEnd`, a parent's `onRunStart` before its children's. Transcript readers
 * (runs with a `traceKey`) report each run's start right before its end and a
 * session's children before the session: their spans nest by derived ids
 * (decision 0093), not by order.
 */
export interface RunListener {
  onRunStart(start: RunStart): void;
  onRunEnd(record: RunRecord): void;
  /** A frame or record failed validation and was skipped. `origin` names the stream or file kind. */
  onMalformed?(origin: string, error: { readonly code: string; readonly message: string }): void;
}
