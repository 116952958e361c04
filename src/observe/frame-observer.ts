/**
 * The interface a protocol tracker offers to whatever carries frames to it
 * (the stdio proxy, a backend, replay of a capture): validated JSON-RPC frames
 * in, runs out through a `RunListener`. Owns no behaviour.
 *
 * @module subagent-otel/observe/frame-observer
 */
import type { DeltaLine } from '../wire/delta-line.js';
import type { JsonRpcFrame } from '../wire/jsonrpc.js';

/** Which way a frame travelled: from the client (parent/editor) to the agent process, or back. */
export type Direction = 'client->agent' | 'agent->client';

/** A protocol tracker fed frame by frame. Implementations never throw and never block. */
export interface FrameObserver {
  /**
   * One JSON-RPC frame that `parseFrame` accepted, in arrival order per direction.
   * @param time epoch milliseconds when it was seen (replay passes recorded times).
   */
  observeFrame(direction: Direction, frame: JsonRpcFrame, time: number): void;
  /**
   * Optional fast path for streamed deltas (decision 0042): a `session.event`
   * notification carrying one text or reasoning delta, recognized by the tap
   * without parsing it. Must have exactly the effect of `observeFrame` with
   * `delta.toFrame()`. `delta` is a view valid only during the call; its
   * text is decoded only if `delta.text()` is called. Observers without it
   * get the frame through `observeFrame`.
   */
  observeDelta?(direction: Direction, delta: DeltaLine, time: number): void;
  /**
   * The stream ended (process exit, EOF, broken pipe). Every open run closes
   * with stop reason `error` and the output folded so far. Idempotent.
   * @param diagnostic short infrastructure detail, e.g. `agent exited with code 3`.
   */
  close(time: number, diagnostic?: string): void;
}
