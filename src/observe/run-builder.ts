/**
 * Accumulates one run from the session events (or raw streamed text) that
 * belong to it: the output fold, usage sums over every assistant message
 * (empty usage-only ones included), steps, tool calls, provider and model,
 * and the last turn end. Shared by every tracker that reads dsh events (live
 * SDK notifications and durable logs), so they cannot disagree. State is
 * bounded by the run's output, steps and tool calls, never by its event count.
 *
 * @module subagent-otel/observe/run-builder
 */
import type { ContentBlock, TokenUsage } from '../wire/content.js';
import { isKnownEvent, type SessionEvent, type TurnEndReason } from '../wire/events.js';
import { AssistantOutputFold } from '../output/assistant-output.js';
import { capUtf8, DIAGNOSTIC_MAX_BYTES } from '../output/result.js';
import type { SubagentStopReason } from '../output/stop-reason.js';
import type { RunRecord, RunStart, StepRecord, ToolCallRecord, UsageTotals } from './run-record.js';

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
  /** Failure detail; capped to 4096 UTF-8 bytes. Defaults to the last failure seen in the events. */
  readonly diagnostic?: string;
  /** What the runtime reported as the output, when it reported anything. */
  readonly reported?: RunRecord['reported'];
  /** Overrides of identity learnt at the end (e.g. `subagent.finished.provider`). */
  readonly agentName?: string;
  readonly provider?: string;
}

/** Adds one message's usage into running totals. */
export function addUsage(totals: UsageTotals, usage: TokenUsage): void {
  totals.inputTokens += usage.inputTokens;
  totals.outputTokens += usage.outputTokens;
  totals.cacheReadTokens += usage.cacheReadTokens ?? 0;
  totals.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
  totals.reasoningTokens += usage.reasoningTokens ?? 0;
  totals.reported = true;
}

/**
 * Input and output tokens in the GenAI conventions' accounting. dsh counts
 * are disjoint (WIRE.md section 1), so input adds cache reads and writes, and
 * output adds reasoning tokens. Every report of token totals (span
 * attributes, metrics, run tables, replay summaries) uses this.
 */
export function conventionTokens(usage: {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens?: number;
  readonly cacheWriteTokens?: number;
  readonly reasoningTokens?: number;
}): { readonly input: number; readonly output: number } {
  return {
    input: usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0),
    output: usage.outputTokens + (usage.reasoningTokens ?? 0),
  };
}

/** Fresh zero totals with `reported: false`. */
export function emptyUsage(): UsageTotals {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, reported: false };
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
  #failure: string | undefined;
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

  /** Folds one validated event. Unknown types are ignored. Never throws. */
  pushEvent(event: SessionEvent): void {
    this.fold.push(event);
    if (event.time > this.#lastTime) this.#lastTime = event.time;
    if (!isKnownEvent(event)) return;
    switch (event.type) {
      case 'user/message':
        this.#userMessage ??= event.data.content;
        return;
      case 'step/start':
        this.#openStep(event.data.turn, event.data.step, event.time);
        return;
      case 'step/end': {
        const step = this.#stepIndex.get(stepKey(event.data.turn, event.data.step));
        if (step !== undefined) step.endTime = event.time;
        return;
      }
      case 'assistant/message': {
        const { usage, stream, turn, step } = event.data;
        const open = this.#openStep(turn, step, event.time);
        if (usage !== undefined) {
          addUsage(this.#usage, usage);
          open.usage = usage;
        }
        if (stream !== undefined) for (const chunk of stream) this.#noteChunk(open, chunk);
        return;
      }
      case 'assistant/attempt': {
        const open = this.#openStep(event.data.turn, event.data.step, event.time);
        for (const chunk of event.data.stream) this.#noteChunk(open, chunk);
        const failure = event.data.failure;
        if (failure !== undefined) {
          // A cancelled call's failure only restates the cancel; it is no diagnostic.
          if (failure.code !== 'aborted') this.#failure = failure.message;
          open.finishReason ??= failure.code === 'aborted' ? 'aborted' : 'error';
        }
        return;
      }
      case 'assistant/chunk': {
        const open = this.#openStep(event.data.turn, event.data.step, event.time);
        this.#noteChunk(open, event.data.chunk);
        return;
      }
      case 'tool/call': {
        const tool: OpenTool = { callId: event.data.callId, name: event.data.name, startTime: event.time, isError: false };
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
          tool.endTime = event.time;
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
        this.#turnEndTime = event.time;
        const err = (event.data.reason as { error?: { message?: unknown } }).error;
        if (typeof err?.message === 'string') this.#failure = err.message;
        return;
      }
      default:
        return;
    }
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
      ...(s.usage !== undefined ? { usage: s.usage } : {}),
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
    const diagnostic = options.diagnostic ?? (completed ? undefined : this.#failure);
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
      ...(diagnostic !== undefined && diagnostic !== '' ? { diagnostic: capUtf8(diagnostic, DIAGNOSTIC_MAX_BYTES) } : {}),
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
