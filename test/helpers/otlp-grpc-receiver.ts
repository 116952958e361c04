/**
 * A real OTLP/gRPC receiver on 127.0.0.1 built on `@grpc/grpc-js`: it serves
 * the collector's `TraceService/Export` and `MetricsService/Export` methods,
 * keeps every request's raw bytes and metadata, and answers with an empty
 * (successful) response. Tests decode the bytes with `otlp-protobuf.ts` and
 * wait with `waitFor`, never on time.
 *
 * @module subagent-otel/test/helpers/otlp-grpc-receiver
 */
import { Server, ServerCredentials, type Metadata, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';

/** One Export call as it arrived. */
export interface GrpcExport {
  readonly service: 'traces' | 'metrics';
  readonly metadata: Record<string, unknown>;
  readonly body: Buffer;
}

/** A running gRPC receiver. */
export interface OtlpGrpcReceiver {
  /** `http://127.0.0.1:<port>`: the value for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly endpoint: string;
  readonly exports: readonly GrpcExport[];
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

/** Starts a receiver on an ephemeral loopback port. */
export async function startOtlpGrpcReceiver(): Promise<OtlpGrpcReceiver> {
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
  server.addService(exportService('/opentelemetry.proto.collector.metrics.v1.MetricsService/Export'), handler('metrics'));
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error !== null ? reject(error) : resolve(bound)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    exports,
    waitFor(match) {
      const found = exports.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
      }),
  };
}
