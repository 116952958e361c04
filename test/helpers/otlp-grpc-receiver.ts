/**
 * A real OTLP/gRPC receiver on 127.0.0.1 built on `@grpc/grpc-js`: it serves
 * the collector's `TraceService/Export` and `MetricsService/Export` methods,
 * plaintext or over TLS, keeps every request's raw bytes and metadata, and
 * answers with an empty (successful) response. Tests decode the bytes with
 * `otlp-protobuf.ts` (or `acceptedSpans`/`acceptedMetricPoints`) and wait
 * with `waitFor`, never on time.
 *
 * @module subagent-otel/test/helpers/otlp-grpc-receiver
 */
import {
  Server,
  ServerCredentials,
  type Metadata,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { OtlpSpan } from './cli.js';
import { decodeMetricsRequest, decodeTraceRequest } from './otlp-protobuf.js';
import { pointsOfMetricBody, spansOfTraceBody, type OtlpMetricPoint } from './otlp-receiver.js';
import type { TlsIdentity } from './tls.js';

/** One Export call as it arrived. */
export interface GrpcExport {
  readonly service: 'traces' | 'metrics';
  readonly metadata: Record<string, unknown>;
  readonly body: Buffer;
}

/** A running gRPC receiver. */
export interface OtlpGrpcReceiver {
  /**
   * The value for `OTEL_EXPORTER_OTLP_ENDPOINT`: `http://127.0.0.1:<port>`, or with TLS
   * `https://localhost:<port>` (grpc-js sets the TLS server name to the endpoint's host, and Node 26
   * refuses an IP address there; `localhost` reaches the loopback the server listens on).
   */
  readonly endpoint: string;
  readonly exports: readonly GrpcExport[];
  /** Spans of every trace export so far, decoded. */
  acceptedSpans(): OtlpSpan[];
  /** Data points of every metric export so far, decoded. */
  acceptedMetricPoints(): OtlpMetricPoint[];
  /** Resolves with the first export (already received or future) that `match` accepts. */
  waitFor(match: (item: GrpcExport) => boolean): Promise<GrpcExport>;
  close(): Promise<void>;
}

const identity = (value: Buffer): Buffer => value;

function exportService(path: string): ServiceDefinition {
  return {
    Export: {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  };
}

/** Options of {@link startOtlpGrpcReceiver}. */
export interface OtlpGrpcReceiverOptions {
  /** Serve TLS with this certificate and key instead of plaintext. */
  readonly tls?: Pick<TlsIdentity, 'certPem' | 'keyPem'>;
}

/** Starts a receiver on an ephemeral loopback port, plaintext unless `options.tls` is given. */
export async function startOtlpGrpcReceiver(options: OtlpGrpcReceiverOptions = {}): Promise<OtlpGrpcReceiver> {
  const exports: GrpcExport[] = [];
  const waiters: Array<{ match: (item: GrpcExport) => boolean; resolve: (item: GrpcExport) => void }> = [];
  const server = new Server();
  const handler = (service: GrpcExport['service']): UntypedServiceImplementation => ({
    Export: (call: { request: Buffer; metadata: Metadata }, callback: (error: null, response: Buffer) => void) => {
      const item: GrpcExport = { service, metadata: call.metadata.getMap(), body: call.request };
      exports.push(item);
      for (const waiter of [...waiters]) {
        if (waiter.match(item)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(item);
        }
      }
      callback(null, Buffer.alloc(0)); // an empty ExportServiceResponse: full success
    },
  });
  server.addService(exportService('/opentelemetry.proto.collector.trace.v1.TraceService/Export'), handler('traces'));
  server.addService(
    exportService('/opentelemetry.proto.collector.metrics.v1.MetricsService/Export'),
    handler('metrics'),
  );
  const credentials =
    options.tls === undefined
      ? ServerCredentials.createInsecure()
      : ServerCredentials.createSsl(null, [{ private_key: options.tls.keyPem, cert_chain: options.tls.certPem }]);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', credentials, (error, bound) => (error !== null ? reject(error) : resolve(bound)));
  });
  const bodies = (service: GrpcExport['service']): Buffer[] =>
    exports.filter((item) => item.service === service).map((item) => item.body);
  return {
    endpoint: options.tls === undefined ? `http://127.0.0.1:${port}` : `https://localhost:${port}`,
    exports,
    acceptedSpans: () => bodies('traces').flatMap((body) => spansOfTraceBody(JSON.stringify(decodeTraceRequest(body)))),
    acceptedMetricPoints: () =>
      bodies('metrics').flatMap((body) => pointsOfMetricBody(JSON.stringify(decodeMetricsRequest(body)))),
    waitFor(match) {
      const found = exports.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        // A graceful shutdown waits for the clients' connections to close; a client that keeps
        // one open (a collector killed mid-call) would hold it for ever, so it is bounded.
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 10_000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
