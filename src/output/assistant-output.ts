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
import { isKnownEvent, type SessionEvent } from '../wire/events.js';

/** Where a selection came from: a complete message, the streamed-text fallback, or nothing. */
export type OutputSource = 'message' | 'stream' | 'none';

/**
 * The incremental form of the rule. Constant work per event (a streamed
 * chunk list is walked once); keeps only the candidate message and the
 * accumulated text, never the event history.
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
    if (!isKnownEvent(event)) return;
    switch (event.type) {
      case 'assistant/message': {
        const { message, stream } = event.data;
        if (stream !== undefined) this.#pushStream(stream);
        if (message.content.length > 0) this.#message = message.content;
        else this.#emptyMessages += 1;
        return;
      }
      case 'assistant/attempt':
        this.#pushStream(event.data.stream);
        return;
      case 'assistant/chunk':
        if (isTextDelta(event.data.chunk)) this.#text += event.data.chunk.text;
        return;
      default:
        return;
    }
  }

  /** Appends raw streamed text from a chunk-only transport (ACP `agent_message_chunk` text). */
  pushText(text: string): void {
    this.#text += text;
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
