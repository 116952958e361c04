/**
 * Which failed exports are refusals for good: the destination understood the
 * request and will never take it (HTTP 4xx other than 408 and 429; gRPC
 * INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED,
 * FAILED_PRECONDITION, UNIMPLEMENTED, UNAUTHENTICATED). Such a request is
 * reported and counted, never kept for a retry. Everything else (no
 * connection, a timeout, 5xx, 408, 429, the other gRPC codes, a local limit)
 * may pass later and goes to the outbox (decision 0100).
 *
 * @module subagent-otel/telemetry/outbox/refusal
 */

/** gRPC status codes that no retry changes. */
const PERMANENT_GRPC_CODES = new Set([3, 5, 6, 7, 9, 12, 16]);

/** The error a refused export settles with: counted as dropped and as refused. */
export class RefusedExportError extends Error {
  override readonly name = 'RefusedExportError';
}

/**
 * Whether `error`, the failure of an export over `protocol`, is a refusal
 * for good. Pure; never throws.
 *
 * The HTTP exporter reports a status it does not retry as an
 * `OTLPExporterError` whose `code` is the HTTP status; the gRPC exporter
 * reports the call's error, whose `code` is the gRPC status.
 */
export function isPermanentRefusal(error: unknown, protocol: 'grpc' | 'http/protobuf' | 'http/json'): boolean {
  if (error === null || typeof error !== 'object') return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'number') return false;
  if (protocol === 'grpc') return PERMANENT_GRPC_CODES.has(code);
  if ((error as { name?: unknown }).name !== 'OTLPExporterError') return false;
  return code >= 400 && code < 500 && code !== 408 && code !== 429;
}
