/**
 * One run read from a coding agent's transcript (Claude Code, Codex, Gemini
 * CLI), built the way every other run is: each model call the format's reader
 * reconstructed is folded through the shared `RunBuilder` (so the one output
 * rule, the usage sums and the step and tool records are the same code as for
 * live observation), and the run is closed with the stop reason the file
 * supports, never `completed` where it says nothing (decision 0093).
 *
 * Owns the translation of reconstructed calls into that shared vocabulary and
 * the precedence of stop evidence. What a call, a tool call or a piece of
 * evidence is in each format is its reader's business (`claude-code.ts`,
 * `codex.ts`, `gemini-cli.ts` beside this file); pricing is `pricing/`'s.
 *
 * @module subagent-otel/transcripts/transcript-run
 */
import type { ContentBlock, StreamChunk, TokenUsage } from '../wire/content.js';
import type { SessionEvent } from '../wire/events.js';
import type { SubagentStopReason } from '../output/stop-reason.js';
import { RunBuilder } from '../observe/run-builder.js';
import type { RunCost, RunRecord, RunStart } from '../observe/run-record.js';

/** One model call as a transcript records it, after its reader's deduplication. */
export interface TranscriptCall {
  /** Epoch ms of the call's first record. */
  readonly time: number;
  /** Epoch ms of its last record; default `time`. */
  readonly endTime?: number;
  /**
   * The assistant message the call produced, blocks in order (`text`,
   * `reasoning`, `tool-call`, others kept verbatim). Empty when the call
   * produced none (a usage-only record): the rule skips it.
   */
  readonly content: readonly ContentBlock[];
  /** The call's usage in dsh buckets (`inputTokens` uncached input only, `outputTokens` with reasoning inside), when recorded. */
  readonly usage?: TokenUsage;
  readonly model?: string;
  /** The call's finish kind in dsh words (`stop`, `tool-calls`, `max-tokens`, `error`, `aborted`), when the file records one. */
  readonly finishReason?: string;
  /** The format's id of the call (`msg_…` / request id), for diagnostics only. */
  readonly id?: string;
}

/**
 * How a run ended, as far as its files say. `inferredFrom` names the record
 * that says it (`<format>:<what>`, e.g. `claude-code:api-error:max_output_tokens`),
 * or `none` with stop reason `unknown` when nothing does.
 */
export interface TranscriptStop {
  readonly reason: SubagentStopReason;
  readonly inferredFrom: string;
  /** Infrastructure detail (an API error's text), never assistant output; capped by the record. */
  readonly diagnostic?: string;
}

/** The stop of a run whose files say nothing about how it ended. */
export const UNKNOWN_STOP: TranscriptStop = { reason: 'unknown', inferredFrom: 'none' };

/**
 * How much a stop reason says, for {@link TranscriptRunBuilder.noteStop}:
 * a later note replaces an earlier one of the same or lower strength. A
 * truncation or an error the file records is never overruled by a generic
 * "completed" (a parent's result can say `completed` for a child cut off at
 * its limit: Claude Code 2.1.199's changelog).
 */
function strength(reason: SubagentStopReason): number {
  switch (reason) {
    case 'unknown':
      return 0;
    case 'completed':
      return 1;
    default:
      return 2;
  }
}

/**
 * The stronger of two pieces of stop evidence, by the precedence
 * {@link TranscriptRunBuilder.noteStop} applies: `next` unless `current`
 * says more. For readers that weigh evidence before noting it (the end of a
 * turn, where a later model answer makes earlier evidence moot). Pure.
 */
export function strongerStop(current: TranscriptStop | undefined, next: TranscriptStop): TranscriptStop {
  return current === undefined || strength(next.reason) >= strength(current.reason) ? next : current;
}

/** Options of {@link TranscriptRunBuilder.finish}. */
export interface TranscriptFinish {
  /** Epoch ms; default the latest time the builder saw. */
  readonly endTime?: number;
  /** What the parent received as the run's output (Claude's `toolUseResult.content`, Codex's wait result, Gemini's tool result), when the files hold it. */
  readonly reported?: RunRecord['reported'];
  readonly cost?: RunCost;
  readonly sessionTotalCost?: RunCost;
  readonly agentName?: string;
}

/**
 * Builds one transcript run. Feed calls and tool calls in file order, note
 * stop evidence as it is met, then `finish` once.
 */
export class TranscriptRunBuilder {
  readonly #builder: RunBuilder;
  readonly #start: RunStart;
  #step = 0;
  #stop: TranscriptStop = UNKNOWN_STOP;
  #lastTime: number;
  #notes: string[] = [];
  #models = new Set<string>();

  constructor(start: RunStart) {
    this.#start = start;
    this.#builder = new RunBuilder(start);
    this.#lastTime = start.startTime;
  }

  get start(): RunStart {
    return this.#start;
  }

  /** Latest time seen (or the start time). */
  get lastTime(): number {
    return this.#lastTime;
  }

  /** Models the calls named so far, in first-seen order. */
  get models(): readonly string[] {
    return [...this.#models];
  }

  /** Folds one model call: a step with its usage and finish reason, and its message through the one rule. Never throws. */
  call(call: TranscriptCall): void {
    const step = this.#step;
    this.#step += 1;
    const end = call.endTime ?? call.time;
    const events: SessionEvent[] = [{ type: 'step/start', time: call.time, data: { turn: 0, step } }];
    if (call.model !== undefined && call.model !== '') {
      this.#models.add(call.model);
      events.push({ type: 'request/context', time: call.time, data: { model: call.model } });
    }
    const stream: StreamChunk[] | undefined =
      call.finishReason !== undefined ? [{ type: 'finish', reason: { kind: call.finishReason } }] : undefined;
    events.push({
      type: 'assistant/message',
      time: end,
      data: {
        turn: 0,
        step,
        message: { id: call.id ?? `call-${step}`, role: 'assistant', content: call.content },
        ...(call.usage !== undefined ? { usage: call.usage } : {}),
        ...(stream !== undefined ? { stream } : {}),
      },
    });
    events.push({ type: 'step/end', time: end, data: { turn: 0, step } });
    for (const event of events) this.#builder.pushEvent(event);
    this.seen(end);
  }

  /** The run's prompt (the delegated task, or the session's first user message), when the start did not carry one. */
  prompt(content: readonly ContentBlock[]): void {
    this.#builder.pushEvent({ type: 'user/message', data: { id: 'prompt', role: 'user', content } });
  }

  toolStarted(callId: string, name: string, time: number): void {
    this.#builder.toolStarted(callId, name, time);
    this.seen(time);
  }

  toolFinished(callId: string, time: number, isError: boolean, errorType?: string): void {
    this.#builder.toolFinished(callId, time, isError, errorType);
    this.seen(time);
  }

  /** Moves the run's latest time forward to `time` (a record of the run that is no call). */
  seen(time: number): void {
    if (Number.isFinite(time) && time > this.#lastTime) this.#lastTime = time;
  }

  /**
   * Notes evidence of how the run ended. It replaces the evidence so far
   * unless that says more (a recorded truncation or error beats a later
   * generic completion; anything beats `unknown`).
   */
  noteStop(stop: TranscriptStop): void {
    if (strength(stop.reason) >= strength(this.#stop.reason)) this.#stop = stop;
  }

  /** The evidence noted so far. */
  get stop(): TranscriptStop {
    return this.#stop;
  }

  /** Notes where the usage is approximate (`<format>:<what>`); each note once. */
  noteUsage(note: string): void {
    if (!this.#notes.includes(note)) this.#notes.push(note);
  }

  /** Closes the run. @returns its record; the builder must not be used after. */
  finish(options: TranscriptFinish = {}): RunRecord {
    const stop = this.#stop;
    const record = this.#builder.finish({
      endTime: options.endTime ?? this.#lastTime,
      stopReason: stop.reason,
      ...(stop.diagnostic !== undefined ? { diagnostic: stop.diagnostic } : {}),
      ...(options.reported !== undefined ? { reported: options.reported } : {}),
      ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
    });
    return {
      ...record,
      stopReasonInferredFrom: stop.inferredFrom,
      ...(options.cost !== undefined ? { cost: options.cost } : {}),
      ...(options.sessionTotalCost !== undefined ? { sessionTotalCost: options.sessionTotalCost } : {}),
      ...(this.#notes.length > 0 ? { usageNotes: [...this.#notes] } : {}),
    };
  }
}
