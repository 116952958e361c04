/**
 * Accumulates one run from the session events (or raw streamed text) that
 * belong to it: the output fold, usage sums over every assistant message
 * (empty usage-only ones included), steps, tool calls, provider and model,
 * and the last turn end. Shared by every tracker that reads dsh events (live
 * SDK notifications and durable logs), so they cannot disagree. State is
 * bounded by the run's output, steps and tool calls, never by its event count.
 * Also owns the one guarded way trackers call their listener (`guardListener`).
 *
 * @module subagent-otel/observe/run-builder
 */
import { normalizeUsage, type ContentBlock, type TokenUsage } from '../wire/content.js';
import { isKnownEvent, type SessionEvent, type TurnEndReason } from '../wire/events.js';
import { AssistantOutputFold } from '../output/assistant-output.js';
import { capUtf8, DIAGNOSTIC_MAX_BYTES } from '../output/result.js';
import type { SubagentStopReason } from '../output/stop-reason.js';
import { diag } from '@opentelemetry/api';
import type { RunListener, RunRecord, RunStart, StepRecord, ToolCallRecord, UsageTotals } from './run-record.js';
import { errorMessage } from '../wire/error-text.js';

/** What `RunBuilder.pushDelta` reads of a streamed delta (`wire/delta-line`'s `DeltaLine` is one). */
export interface StreamDelta {
  readonly time: number;
  readonly turn: number;
  readonly step: number;
  readonly chunkType: 'text-delta' | 'reasoning-delta';
  /** The delta's text; called at most once, and only when it can still be selected. */
  text(): string;
}

interface OpenStep {
  turn?: number;
  step: number;
  startTime: number;
  endTime?: number;
  model?: string;
  usage?: TokenUsage;
  finishReason?: string;
}

interface OpenTool {
  callId: string;
  name: string;
  startTime: number;
  endTime?: number;
  isError: boolean;
  errorType?: string;
}

/** Options of `RunBuilder.finish`. */
export interface FinishOptions {
  readonly endTime: number;
  readonly stopReason: SubagentStopReason;
  /**
   * Failure detail; capped to 4096 UTF-8 bytes. None by default: failures seen in dsh events are not
   * copied, as upstream's in-process reader and SDK backend set no diagnostic (docs/decisions 0011).
   */
  readonly diagnostic?: string;
  /** What the runtime reported as the output, when it reported anything. */
  readonly reported?: RunRecord['reported'];
  /** Overrides of identity learnt at the end (e.g. `subagent.finished.provider`). */
  readonly agentName?: string;
  readonly provider?: string;
}

/** Adds one message's usage into running totals. */
export function addUsage(totals: UsageTotals, raw: TokenUsage): void {
  // Counts are clamped (an out-of-range number never drops its message), and so are the sums.
  const usage = normalizeUsage(raw);
  totals.inputTokens = Math.min(Number.MAX_SAFE_INTEGER, totals.inputTokens + usage.inputTokens);
  totals.outputTokens = Math.min(Number.MAX_SAFE_INTEGER, totals.outputTokens + usage.outputTokens);
  totals.cacheReadTokens = Math.min(Number.MAX_SAFE_INTEGER, totals.cacheReadTokens + (usage.cacheReadTokens ?? 0));
  totals.cacheWriteTokens = Math.min(Number.MAX_SAFE_INTEGER, totals.cacheWriteTokens + (usage.cacheWriteTokens ?? 0));
  totals.reasoningTokens = Math.min(Number.MAX_SAFE_INTEGER, totals.reasoningTokens + (usage.reasoningTokens ?? 0));
  totals.reported = true;
}

/** Fresh zero totals with `reported: false`. */
export function emptyUsage(): UsageTotals {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    reported: false,
  };
}

/** Builds one `RunRecord`. Not reusable after `finish`. */
export class RunBuilder {
  readonly start: RunStart;
  readonly fold = new AssistantOutputFold();
  #usage = emptyUsage();
  #steps: OpenStep[] = [];
  #stepIndex = new Map<string, OpenStep>();
  /** The step `#openStep` returned last (it is also in `#stepIndex`). */
  #lastStep: OpenStep | undefined;
  #tools: OpenTool[] = [];
  #toolIndex = new Map<string, OpenTool>();
  #turnEnd: TurnEndReason | undefined;
  #turnEndTime: number | undefined;
  #provider: string | undefined;
  #model: string | undefined;
  #lastTime: number;
  /** Content of the first `user/message` of the run: its prompt when the start carried none. */
  #userMessage: readonly ContentBlock[] | undefined;

  constructor(start: RunStart) {
    this.start = start;
    this.#provider = start.provider;
    this.#model = start.model;
    this.#lastTime = start.startTime;
  }

  /** The last `turn/end` reason folded, if any. */
  get turnEnd(): TurnEndReason | undefined {
    return this.#turnEnd;
  }

  /** Time of the last `turn/end` folded, if any. */
  get turnEndTime(): number | undefined {
    return this.#turnEndTime;
  }

  /** Latest event time seen (or the start time). */
  get lastTime(): number {
    return this.#lastTime;
  }

  /** Sets provider/model learnt outside the events (e.g. `initialize`). Never overrides a later `request/context`. */
  setRoute(provider: string | undefined, model: string | undefined): void {
    this.#provider ??= provider;
    this.#model ??= model;
  }

  /** Appends raw streamed text (chunk-only transports). */
  pushText(text: string): void {
    this.fold.pushText(text);
  }

  /**
   * Folds one validated event. Unknown types are ignored. Never throws.
   * @param at the event's time: default its own `time`, else the latest time seen (events may carry none).
   */
  pushEvent(event: SessionEvent, at?: number): void {
    this.fold.push(event);
    const time = event.time ?? at ?? this.#lastTime;
    if (time > this.#lastTime) this.#lastTime = time;
    if (!isKnownEvent(event)) return;
    switch (event.type) {
      case 'user/message':
        this.#userMessage ??= event.data.content;
        return;
      case 'step/start':
        this.#openStep(event.data.turn, event.data.step, time);
        return;
      case 'step/end': {
        const step = this.#stepIndex.get(stepKey(event.data.turn, event.data.step));
        if (step !== undefined) step.endTime = time;
        return;
      }
      case 'assistant/message': {
        const { usage, stream, turn, step } = event.data;
        const open = this.#openStep(turn, step, time);
        if (usage !== undefined) {
          addUsage(this.#usage, usage);
          open.usage = usage;
        }
        if (stream !== undefined) for (const chunk of stream) this.#noteChunk(open, chunk);
        return;
      }
      case 'assistant/attempt': {
        const open = this.#openStep(event.data.turn, event.data.step, time);
        for (const chunk of event.data.stream) this.#noteChunk(open, chunk);
        const failure = event.data.failure;
        if (failure !== undefined) open.finishReason ??= failure.code === 'aborted' ? 'aborted' : 'error';
        return;
      }
      case 'assistant/chunk': {
        const open = this.#openStep(event.data.turn, event.data.step, time);
        this.#noteChunk(open, event.data.chunk);
        return;
      }
      case 'tool/call': {
        const tool: OpenTool = { callId: event.data.callId, name: event.data.name, startTime: time, isError: false };
        this.#tools.push(tool);
        this.#toolIndex.set(tool.callId, tool);
        return;
      }
      case 'tool/result': {
        for (const block of event.data.message.content) {
          if (block.type !== 'tool-result') continue;
          const b = block as { toolCallId: string; isError?: boolean };
          const tool = this.#toolIndex.get(b.toolCallId);
          if (tool === undefined) continue;
          tool.endTime = time;
          const failed = b.isError === true || event.data.error !== undefined;
          tool.isError = failed;
          if (failed) tool.errorType = event.data.error?.code ?? event.data.error?.name ?? 'tool_error';
          this.#toolIndex.delete(b.toolCallId);
        }
        return;
      }
      case 'request/context':
        if (event.data.provider !== undefined) this.#provider = event.data.provider;
        if (event.data.model !== undefined) this.#model = event.data.model;
        return;
      case 'turn/end': {
        this.#turnEnd = event.data.reason;
        this.#turnEndTime = time;
        return;
      }
      default:
        return;
    }
  }

  /**
   * Folds one streamed text or reasoning delta (an `assistant/chunk` event
   * with a `text-delta` or `reasoning-delta` chunk and a `time`) exactly as
   * `pushEvent` folds that event, reading the text only when it can still be
   * selected: for a text delta while the fold has no non-empty message
   * (decision 0042). Never throws.
   */
  pushDelta(delta: StreamDelta): void {
    if (delta.chunkType === 'text-delta' && this.fold.takesText) this.fold.pushText(delta.text());
    const time = delta.time;
    if (time > this.#lastTime) this.#lastTime = time;
    this.#openStep(delta.turn, delta.step, time);
  }

  /** Records a tool call seen outside dsh events (ACP `tool_call`). */
  toolStarted(callId: string, name: string, time: number): void {
    if (this.#toolIndex.has(callId)) return;
    const tool: OpenTool = { callId, name, startTime: time, isError: false };
    this.#tools.push(tool);
    this.#toolIndex.set(callId, tool);
  }

  /** Records the end of a tool call started with `toolStarted`; unknown ids are ignored. */
  toolFinished(callId: string, time: number, isError: boolean, errorType?: string): void {
    const tool = this.#toolIndex.get(callId);
    if (tool === undefined) return;
    tool.endTime = time;
    tool.isError = isError;
    if (isError) tool.errorType = errorType ?? 'tool_error';
    this.#toolIndex.delete(callId);
  }

  /** Adds usage reported outside dsh events (an ACP prompt response). */
  addUsage(usage: TokenUsage): void {
    addUsage(this.#usage, usage);
  }

  /**
   * Closes the run. Unfinished steps end at `endTime`; unfinished tools stay
   * without an end time and are marked failed with `unfinished` when the run
   * did not complete. @returns the record; the builder must not be used after.
   */
  finish(options: FinishOptions): RunRecord {
    const steps: StepRecord[] = this.#steps.map((s) => ({
      ...(s.turn !== undefined ? { turn: s.turn } : {}),
      step: s.step,
      startTime: s.startTime,
      endTime: s.endTime ?? options.endTime,
      ...(s.model !== undefined ? { model: s.model } : this.#model !== undefined ? { model: this.#model } : {}),
      ...(s.usage !== undefined ? { usage: normalizeUsage(s.usage) } : {}),
      ...(s.finishReason !== undefined ? { finishReason: s.finishReason } : {}),
    }));
    const completed = options.stopReason === 'completed';
    const toolCalls: ToolCallRecord[] = this.#tools.map((t) => {
      const unfinished = t.endTime === undefined && !completed;
      return {
        callId: t.callId,
        name: t.name,
        startTime: t.startTime,
        ...(t.endTime !== undefined ? { endTime: t.endTime } : {}),
        isError: t.isError || unfinished,
        ...(t.errorType !== undefined ? { errorType: t.errorType } : unfinished ? { errorType: 'unfinished' } : {}),
      };
    });
    const diagnostic = options.diagnostic;
    const provider = options.provider ?? this.#provider;
    const model = this.#model;
    const prompt = this.start.prompt ?? this.#userMessage;
    const record: RunRecord = {
      ...this.start,
      ...(prompt !== undefined ? { prompt } : {}),
      ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
      ...(provider !== undefined ? { provider } : {}),
      ...(model !== undefined ? { model } : {}),
      endTime: options.endTime,
      stopReason: options.stopReason,
      ...(diagnostic !== undefined && diagnostic !== ''
        ? { diagnostic: capUtf8(diagnostic, DIAGNOSTIC_MAX_BYTES) }
        : {}),
      output: this.fold.collect(),
      outputSource: this.fold.source,
      emptyMessages: this.fold.emptyMessages,
      usage: { ...this.#usage },
      steps,
      toolCalls,
      ...(options.reported !== undefined ? { reported: options.reported } : {}),
    };
    return record;
  }

  #openStep(turn: number, step: number, time: number): OpenStep {
    // Consecutive events nearly always belong to the same step: skip building the key for them.
    const last = this.#lastStep;
    if (last !== undefined && last.turn === turn && last.step === step) return last;
    const key = stepKey(turn, step);
    let open = this.#stepIndex.get(key);
    if (open === undefined) {
      open = { turn, step, startTime: time };
      this.#steps.push(open);
      this.#stepIndex.set(key, open);
    }
    this.#lastStep = open;
    return open;
  }

  #noteChunk(step: OpenStep, chunk: { type: string }): void {
    if (chunk.type === 'finish') {
      const kind = (chunk as { reason?: { kind?: unknown } }).reason?.kind;
      if (typeof kind === 'string') step.finishReason = kind;
    } else if (chunk.type === 'usage' && step.usage === undefined) {
      // Usage chunks are reported again on the message; only keep them for steps whose message never came.
      const usage = (chunk as { usage?: TokenUsage }).usage;
      if (usage !== undefined) step.usage = usage;
    }
  }
}

function stepKey(turn: number, step: number): string {
  return `${turn}:${step}`;
}

/** Distinct listener failure messages logged; later ones are only counted. */
const MAX_LOGGED_LISTENER_FAILURES = 32;
const loggedListenerFailures = new Set<string>();
let listenerFailureCount = 0;

/**
 * Listener calls that threw, process-wide, since start: the counter behind
 * {@link guardListener}. A `RunListener` must not throw, so this is 0 unless
 * a listener is broken.
 */
export function listenerFailures(): number {
  return listenerFailureCount;
}

/**
 * The one guarded way every tracker calls its listener: a wrapper whose
 * methods never throw. A throwing call is counted ({@link listenerFailures})
 * and logged through the OpenTelemetry diag logger (each distinct message
 * once), and the tracker goes on with its other runs and frames. Wrapping a
 * guarded listener again returns it unchanged.
 */
export function guardListener(listener: RunListener): RunListener {
  if (GUARDED.has(listener)) return listener;
  const call = (method: string, fn: () => void): void => {
    try {
      fn();
    } catch (error) {
      listenerFailureCount += 1;
      const message = `subagent-otel: RunListener.${method} threw and was skipped: ${errorMessage(error)}`;
      if (loggedListenerFailures.size < MAX_LOGGED_LISTENER_FAILURES && !loggedListenerFailures.has(message)) {
        loggedListenerFailures.add(message);
        try {
          diag.error(message);
        } catch {
          // A broken diag logger: the failure is still counted.
        }
      }
    }
  };
  const guarded: RunListener = {
    onRunStart: (start) => call('onRunStart', () => listener.onRunStart(start)),
    onRunEnd: (record) => call('onRunEnd', () => listener.onRunEnd(record)),
    onMalformed: (origin, error) => call('onMalformed', () => listener.onMalformed?.(origin, error)),
  };
  GUARDED.add(guarded);
  return guarded;
}

const GUARDED = new WeakSet<RunListener>();
