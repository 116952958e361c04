/**
 * The one output-selection rule. Every consumer in this project — result
 * reading, the `subagent/end` payload, the foreground tool result, span
 * attributes, metrics and reports — selects a child's output here and nowhere
 * else.
 *
 * The rule: select the last assistant message whose `content` is non-empty.
 * Without one, select the accumulated text of `text-delta` chunks (from
 * `assistant/chunk` events, from the `stream` embedded in `assistant/message`
 * and `assistant/attempt`, or pushed as raw text by a chunk-only transport
 * such as ACP) as one text block. Without either, there is no output
 * (`undefined`). Empty-content messages are ignored: they are usage records
 * (a `max-tokens` step that assembled only a truncated tool call). The rule
 * tests content length, not text, so a reasoning-only message beats streamed
 * text; a non-empty message beats text streamed after it. Selection never
 * depends on the stop reason. Reasoning deltas, tool-call deltas and
 * tool-result content never count as output.
 *
 * @module subagent-otel/output/assistant-output
 */
import { isTextDelta, type ContentBlock, type StreamChunk } from '../wire/content.js';
import type { KnownSessionEvent, SessionEvent } from '../wire/events.js';

/** Where a selection came from: a complete message, the streamed-text fallback, or nothing. */
export type OutputSource = 'message' | 'stream' | 'none';

/**
 * The incremental form of the rule. Constant work per event (a streamed
 * chunk list is walked at most once); keeps only the candidate message and
 * the accumulated text, never the event history. Once a non-empty message
 * was seen, streamed text can never be selected again, so it is no longer
 * accumulated (or even walked): memory stays bounded by the output.
 *
 * @example
 * const fold = new AssistantOutputFold();
 * for (const event of events) fold.push(event);
 * fold.collect(); // ContentBlock[] | undefined
 */
export class AssistantOutputFold {
  #message: readonly ContentBlock[] | undefined;
  #text = '';
  #emptyMessages = 0;

  /**
   * Folds one session event. Events of other types (and unknown types) are
   * ignored. Never throws on a validated event; never retains the event.
   */
  push(event: SessionEvent): void {
    // An event of an unknown type matches no case below, so the cast never lets one through.
    const known = event as KnownSessionEvent;
    switch (known.type) {
      case 'assistant/message': {
        const { message, stream } = known.data;
        if (stream !== undefined && this.#message === undefined) this.#pushStream(stream);
        if (message.content.length > 0) {
          this.#message = message.content;
          this.#text = ''; // never selected again: a non-empty message beats any text, earlier or later
        } else {
          this.#emptyMessages += 1;
        }
        return;
      }
      case 'assistant/attempt':
        if (this.#message === undefined) this.#pushStream(known.data.stream);
        return;
      case 'assistant/chunk':
        if (this.#message === undefined && isTextDelta(known.data.chunk)) this.#text += known.data.chunk.text;
        return;
      default:
        return;
    }
  }

  /** Appends raw streamed text from a chunk-only transport (ACP `agent_message_chunk` text). */
  pushText(text: string): void {
    if (this.#message === undefined) this.#text += text;
  }

  /**
   * Whether streamed text can still be selected: `false` once a non-empty
   * message was folded (it beats any text, earlier or later). Lets a caller
   * skip decoding text the fold would drop; `pushText` drops it either way.
   */
  get takesText(): boolean {
    return this.#message === undefined;
  }

  /**
   * @returns the last non-empty message's content; else the accumulated
   *   streamed text as one text block; else `undefined` when the child
   *   produced neither. The returned array is the message's own (read-only).
   */
  collect(): readonly ContentBlock[] | undefined {
    if (this.#message !== undefined) return this.#message;
    if (this.#text.length > 0) return [{ type: 'text', text: this.#text }];
    return undefined;
  }

  /** Which branch of the rule `collect()` takes right now. */
  get source(): OutputSource {
    if (this.#message !== undefined) return 'message';
    return this.#text.length > 0 ? 'stream' : 'none';
  }

  /** How many empty-content assistant messages were skipped so far. */
  get emptyMessages(): number {
    return this.#emptyMessages;
  }

  #pushStream(stream: readonly StreamChunk[]): void {
    for (const chunk of stream) if (isTextDelta(chunk)) this.#text += chunk.text;
  }
}

/**
 * Applies the rule to a complete event suffix (the events of one run, after
 * its boundary). Runs the same fold as `AssistantOutputFold`, so the two
 * cannot diverge.
 *
 * @returns the selected content, or `undefined` when the child produced
 *   neither a non-empty message nor streamed text. Never mutates `events`.
 */
export function finalAssistantOutput(events: Iterable<SessionEvent>): readonly ContentBlock[] | undefined {
  const fold = new AssistantOutputFold();
  for (const event of events) fold.push(event);
  return fold.collect();
}
