/**
 * JSON-RPC 2.0 envelopes: classifies one text line as a request, a
 * notification, a response or a rejection. Knows no method names (those live
 * in `sdk-protocol.ts` and `acp-protocol.ts`). Never throws on malformed input.
 *
 * @module subagent-otel/wire/jsonrpc
 */
import { describeValue, wireError, type WireError } from './wire-error.js';

export type JsonRpcId = string | number | null;

export interface JsonRpcRequest {
  readonly kind: 'request';
  readonly id: string | number;
  readonly method: string;
  readonly params: unknown;
}
export interface JsonRpcNotification {
  readonly kind: 'notification';
  readonly method: string;
  readonly params: unknown;
}
export interface JsonRpcResponse {
  readonly kind: 'response';
  readonly id: JsonRpcId;
  /** Present on success. */
  readonly result?: unknown;
  /** Present on failure. */
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
}
export type JsonRpcFrame = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export type FrameResult =
  { readonly ok: true; readonly frame: JsonRpcFrame } | { readonly ok: false; readonly error: WireError };

/**
 * Parses one NDJSON line (without its line terminator) as a JSON-RPC 2.0 message.
 *
 * @returns `{ ok: true, frame }` for a request (`method` + `id`), notification
 *   (`method`, no `id`) or response (`id` + `result` or `error`);
 *   otherwise `{ ok: false, error }` with code `not-json`, `not-object` or
 *   `not-jsonrpc`. Never throws; never retains the caller's line.
 */
export function parseFrame(line: string): FrameResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    // JSON.parse throws only SyntaxError for malformed text; that is the rejection itself.
    const reason = err instanceof SyntaxError ? err.message : 'unparseable';
    return { ok: false, error: wireError('not-json', '', 'JSON text', `text that does not parse (${reason})`) };
  }
  return classifyFrame(value);
}

/** Classifies an already parsed JSON value; same contract as `parseFrame`. */
export function classifyFrame(value: unknown): FrameResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: wireError('not-object', '', 'a JSON-RPC object', describeValue(value)) };
  }
  const msg = value as Record<string, unknown>;
  if (msg.jsonrpc !== '2.0') {
    return { ok: false, error: wireError('not-jsonrpc', 'jsonrpc', 'string "2.0"', describeValue(msg.jsonrpc)) };
  }
  const id = msg.id;
  const hasId = 'id' in msg && id !== undefined;
  if (hasId && !(typeof id === 'string' || typeof id === 'number' || id === null)) {
    return { ok: false, error: wireError('not-jsonrpc', 'id', 'string, number or null', describeValue(id)) };
  }
  if (typeof msg.method === 'string') {
    if (!hasId) return { ok: true, frame: { kind: 'notification', method: msg.method, params: msg.params } };
    if (id === null)
      return { ok: false, error: wireError('not-jsonrpc', 'id', 'string or number on a request', 'null') };
    return { ok: true, frame: { kind: 'request', id: id as string | number, method: msg.method, params: msg.params } };
  }
  if ('method' in msg) {
    return { ok: false, error: wireError('not-jsonrpc', 'method', 'string', describeValue(msg.method)) };
  }
  if (!hasId)
    return { ok: false, error: wireError('not-jsonrpc', 'id', 'an id on a response', 'nothing (field missing)') };
  if ('error' in msg) {
    const err = msg.error as Record<string, unknown> | null;
    if (err === null || typeof err !== 'object' || typeof err.code !== 'number' || typeof err.message !== 'string') {
      return {
        ok: false,
        error: wireError('not-jsonrpc', 'error', '{ code: number, message: string }', describeValue(msg.error)),
      };
    }
    return {
      ok: true,
      frame: { kind: 'response', id: id as JsonRpcId, error: { code: err.code, message: err.message, data: err.data } },
    };
  }
  if (!('result' in msg)) {
    return { ok: false, error: wireError('not-jsonrpc', 'result', 'result or error on a response', 'neither') };
  }
  return { ok: true, frame: { kind: 'response', id: id as JsonRpcId, result: msg.result } };
}
