/**
 * Protocol auto-detection for the stdio proxy and captures: decides from the
 * first frames whether a conversation speaks the dsh SDK runtime protocol or
 * the Agent Client Protocol, then hands every frame (the buffered ones first,
 * in order) to the tracker for that protocol. Owns only the decision.
 *
 * @module subagent-otel/observe/protocol-sniffer
 */
import type { DeltaLine } from '../wire/delta-line.js';
import type { JsonRpcFrame } from '../wire/jsonrpc.js';
import type { Direction, FrameObserver } from './frame-observer.js';

/** The protocols a tracker exists for. */
export type Protocol = 'sdk' | 'acp';

/** Frames held while undecided; past this the default protocol is chosen. */
export const SNIFF_FRAME_LIMIT = 64;

const ACP_METHODS = new Set([
  'session/new',
  'session/load',
  'authenticate',
  'session/update',
  'session/request_permission',
  'fs/read_text_file',
  'terminal/create',
]);
const SDK_METHODS = new Set(['session.event', 'session.status', 'subagent.started', 'subagent.finished', 'shutdown']);

/**
 * Tells the protocol from one frame.
 * @returns `sdk` or `acp` when the frame is specific to one of them, else `undefined`.
 */
export function protocolOfFrame(frame: JsonRpcFrame): Protocol | undefined {
  if (frame.kind === 'response') return undefined;
  if (ACP_METHODS.has(frame.method)) return 'acp';
  if (SDK_METHODS.has(frame.method)) return 'sdk';
  const params = frame.params as Record<string, unknown> | null | undefined;
  if (params === null || typeof params !== 'object') return undefined;
  if (frame.method === 'initialize') {
    if (typeof params.protocolVersion === 'number') return 'acp';
    if ('cwd' in params || 'provider' in params || 'model' in params) return 'sdk';
  }
  if (frame.method === 'session/prompt') {
    if ('prompt' in params) return 'acp';
    if ('contentBlocks' in params) return 'sdk';
  }
  return undefined;
}

/**
 * A `FrameObserver` that picks the tracker by the first telling frame.
 * Holds at most `SNIFF_FRAME_LIMIT` frames while undecided; then falls back
 * to `fallback`. Never throws.
 */
export class ProtocolSniffer implements FrameObserver {
  readonly #factories: Record<Protocol, () => FrameObserver>;
  readonly #fallback: Protocol;
  #chosen: FrameObserver | undefined;
  #protocol: Protocol | undefined;
  #held: Array<[Direction, JsonRpcFrame, number]> = [];

  constructor(factories: Record<Protocol, () => FrameObserver>, fallback: Protocol = 'sdk') {
    this.#factories = factories;
    this.#fallback = fallback;
  }

  /** The protocol decided so far, if any. */
  get protocol(): Protocol | undefined {
    return this.#protocol;
  }

  observeFrame(direction: Direction, frame: JsonRpcFrame, time: number): void {
    if (this.#chosen !== undefined) return this.#chosen.observeFrame(direction, frame, time);
    this.#held.push([direction, frame, time]);
    const decided = protocolOfFrame(frame);
    if (decided !== undefined) this.#choose(decided);
    else if (this.#held.length >= SNIFF_FRAME_LIMIT) this.#choose(this.#fallback);
  }

  /** Hands a delta on as it is when the chosen tracker takes deltas; else (or while undecided) as its frame. */
  observeDelta(direction: Direction, delta: DeltaLine, time: number): void {
    const chosen = this.#chosen;
    if (chosen?.observeDelta !== undefined) return chosen.observeDelta(direction, delta, time);
    this.observeFrame(direction, delta.toFrame(), time);
  }

  close(time: number, diagnostic?: string): void {
    if (this.#chosen === undefined && this.#held.length > 0) this.#choose(this.#fallback);
    this.#chosen?.close(time, diagnostic);
  }

  #choose(protocol: Protocol): void {
    this.#protocol = protocol;
    const chosen = this.#factories[protocol]();
    this.#chosen = chosen;
    const held = this.#held;
    this.#held = [];
    for (const [direction, frame, time] of held) chosen.observeFrame(direction, frame, time);
  }
}
