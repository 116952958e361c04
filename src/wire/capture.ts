/**
 * The capture format written by `subagent-otel proxy --capture` and read by
 * `subagent-otel replay`: NDJSON, a header line, then one record per observed
 * line of the conversation with its direction and time. Lines that are not
 * valid UTF-8 are kept as base64 so nothing is lost. Owns the shape, its
 * serialization and its validation; never does I/O.
 *
 * A capture file is only ever appended to (never truncated), so several
 * proxies may share one: each writes its own header, with a stream `id`, and
 * tags each of its records with that id (`s`), so their whole lines may
 * interleave and replay still tells the conversations apart.
 *
 * @module subagent-otel/wire/capture
 */
import * as z from 'zod';
import { decodeUtf8Line } from './ndjson.js';
import { describeValue, wireError, wireErrorFromIssues, type WireError } from './wire-error.js';

/** `type` of a capture's header line. */
export const CAPTURE_HEADER_TYPE = 'subagent-otel-capture' as const;
/** Current capture format version. */
export const CAPTURE_VERSION = 1 as const;

/** First line of a capture. */
export interface CaptureHeader {
  readonly type: typeof CAPTURE_HEADER_TYPE;
  readonly version: number;
  /** Protocol chosen on the command line: `sdk`, `acp` or `auto`. */
  readonly protocol: string;
  /** Epoch ms when the capture started. */
  readonly startedAt: number;
  /** Stream id of this writer; its records carry it as `s`. Absent in single-stream captures. */
  readonly id?: string;
}

/** One observed line: `d` is `c` (client to agent) or `a` (agent to client); `l` the text, or `b` base64 bytes. */
export interface CaptureRecord {
  readonly t: number;
  readonly d: 'c' | 'a';
  readonly l?: string;
  readonly b?: string;
  /** Stream id of the writer (its header's `id`). */
  readonly s?: string;
}

const HeaderSchema = z.looseObject({
  type: z.literal(CAPTURE_HEADER_TYPE),
  version: z.number().int().positive(),
  protocol: z.string(),
  startedAt: z.number(),
  id: z.string().optional(),
});
const RecordSchema = z
  .looseObject({
    t: z.number(),
    d: z.enum(['c', 'a']),
    l: z.string().optional(),
    b: z.string().optional(),
    s: z.string().optional(),
  })
  .refine((r) => (r.l === undefined) !== (r.b === undefined), { message: 'exactly one of l or b' });

/** Serializes the header line (no newline); `id` names the stream of a writer sharing the file. */
export function captureHeaderLine(protocol: string, startedAt: number, id?: string): string {
  const header: CaptureHeader = {
    type: CAPTURE_HEADER_TYPE,
    version: CAPTURE_VERSION,
    protocol,
    startedAt,
    ...(id !== undefined ? { id } : {}),
  };
  return JSON.stringify(header);
}

/**
 * Serializes one observed line (no newline), tagged with the stream `id`
 * when given. Valid UTF-8 is stored as text, anything else as base64.
 */
export function captureRecordLine(direction: 'c' | 'a', time: number, bytes: Uint8Array, id?: string): string {
  const decoded = decodeUtf8Line(bytes);
  const stream = id !== undefined ? { s: id } : {};
  const record: CaptureRecord = decoded.ok
    ? { t: time, d: direction, l: decoded.text, ...stream }
    : {
        t: time,
        d: direction,
        b: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'),
        ...stream,
      };
  return JSON.stringify(record);
}

/** `true` when a parsed first line is a capture header. */
export function isCaptureHeader(value: unknown): boolean {
  return value !== null && typeof value === 'object' && (value as { type?: unknown }).type === CAPTURE_HEADER_TYPE;
}

/** Validates a capture header. Never throws. */
export function parseCaptureHeader(
  value: unknown,
): { ok: true; header: CaptureHeader } | { ok: false; error: WireError } {
  const parsed = HeaderSchema.safeParse(value);
  if (parsed.success) return { ok: true, header: parsed.data as CaptureHeader };
  return { ok: false, error: wireErrorFromIssues(parsed.error.issues, value) };
}

/**
 * Validates one capture record.
 * @returns the record with its line as bytes, or a `WireError`. Never throws.
 */
export function parseCaptureRecord(
  value: unknown,
):
  | { ok: true; time: number; direction: 'c' | 'a'; bytes: Uint8Array; stream?: string }
  | { ok: false; error: WireError } {
  const parsed = RecordSchema.safeParse(value);
  if (!parsed.success) {
    if (value === null || typeof value !== 'object')
      return { ok: false, error: wireError('not-object', '', 'a capture record', describeValue(value)) };
    return { ok: false, error: wireErrorFromIssues(parsed.error.issues, value) };
  }
  const r = parsed.data;
  const bytes = r.l !== undefined ? Buffer.from(r.l, 'utf8') : Buffer.from(r.b ?? '', 'base64');
  return { ok: true, time: r.t, direction: r.d, bytes, ...(r.s !== undefined ? { stream: r.s } : {}) };
}
