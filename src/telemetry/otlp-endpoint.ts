/**
 * The one validation of OTLP endpoint variables (`OTEL_EXPORTER_OTLP_ENDPOINT`
 * and the per-signal ones), shared by the telemetry plan (`setup.ts`, which
 * sends a signal with an unusable endpoint to the files) and the
 * configuration check (`config-problems.ts`, which names it).
 *
 * The OpenTelemetry exporter specification: for OTLP/HTTP the endpoint MUST
 * be a URL with scheme `http` or `https` and a host; for OTLP/gRPC it MUST
 * accept such a URL and SHOULD accept any form the gRPC client takes, which
 * for the JavaScript exporter includes a bare `host:port`. So `localhost:4318`
 * is refused for `http/protobuf` and `http/json` (it parses as a URL of scheme
 * `localhost:`, which no HTTP client can send to), and accepted for `grpc`.
 *
 * @module subagent-otel/telemetry/otlp-endpoint
 */
import type { OtlpProtocol } from './config.js';

/** An absolute `http:`/`https:` URL with a host. */
function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    // The URL constructor throws TypeError for anything that is not an absolute URL.
    return false;
  }
}

/**
 * Whether `text` (trimmed) is an endpoint the exporter of `protocol` can send
 * to: an http(s) URL with a host for every protocol; for `grpc` also
 * `host:port` without a scheme. Pure, never throws.
 */
export function isOtlpEndpoint(text: string, protocol: OtlpProtocol): boolean {
  const value = text.trim();
  if (isHttpUrl(value)) return true;
  if (protocol !== 'grpc' || value.includes('://')) return false;
  return /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(value);
}

/** An example endpoint for messages, by protocol. */
export function exampleEndpoint(protocol: OtlpProtocol): string {
  return protocol === 'grpc' ? 'http://localhost:4317' : 'http://localhost:4318';
}

/** The variables that hold OTLP endpoints, each with the variable naming its protocol (besides `OTEL_EXPORTER_OTLP_PROTOCOL`). */
export const OTLP_ENDPOINT_VARIABLES: readonly { readonly endpoint: string; readonly protocol?: string }[] = [
  { endpoint: 'OTEL_EXPORTER_OTLP_ENDPOINT' },
  { endpoint: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', protocol: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' },
  { endpoint: 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', protocol: 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL' },
];
