/**
 * Test helper: the project's own collector distribution (`subagent-otelcol`,
 * built by `npm run stack -- build`) as a destination that a test stops and
 * starts again on the same ports, forwarding everything it takes to a gRPC
 * receiver of the test (`otlp-grpc-receiver.ts`), which counts what arrived.
 * A missing binary fails the test with the command that builds it.
 *
 * @module subagent-otel/test/helpers/collector-process
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { binary } from '../../scripts/stack/engines.mjs';

/** How long `stop()` waits after SIGTERM before it kills the collector. */
const STOP_GRACE_MS = 20_000;

/** A restartable collector. */
export interface CollectorProcess {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT` for OTLP/HTTP. */
  readonly otlpHttp: string;
  /** `OTEL_EXPORTER_OTLP_ENDPOINT` for OTLP/gRPC. */
  readonly otlpGrpc: string;
  /** Starts it (again) on its ports; resolves once its health check answers. */
  start(): Promise<void>;
  /** SIGTERM, and waits for the exit (SIGKILL after a grace period, noted on the console). */
  stop(): Promise<void>;
  log(): string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/**
 * Writes a collector config into `dir` (OTLP in over HTTP and gRPC, OTLP out
 * to `sinkEndpoint`, `host:port`) and returns the collector, not started.
 */
export async function collectorProcess(dir: string, sinkEndpoint: string): Promise<CollectorProcess> {
  const [http, grpc, health] = [await freePort(), await freePort(), await freePort()];
  const config = join(dir, 'otelcol.outbox-test.yaml');
  writeFileSync(
    config,
    [
      'extensions:',
      '  health_check:',
      `    endpoint: 127.0.0.1:${health}`,
      'receivers:',
      '  otlp:',
      '    protocols:',
      '      http:',
      `        endpoint: 127.0.0.1:${http}`,
      '      grpc:',
      `        endpoint: 127.0.0.1:${grpc}`,
      'exporters:',
      '  otlp_grpc/sink:',
      `    endpoint: ${sinkEndpoint}`,
      '    tls:',
      '      insecure: true',
      'service:',
      '  extensions: [health_check]',
      '  telemetry:',
      '    metrics:',
      '      level: none',
      '  pipelines:',
      '    traces:',
      '      receivers: [otlp]',
      '      exporters: [otlp_grpc/sink]',
      '    metrics:',
      '      receivers: [otlp]',
      '      exporters: [otlp_grpc/sink]',
      '',
    ].join('\n'),
  );
  const path = binary('subagent-otelcol');
  let child: ChildProcess | undefined;
  let output = '';
  const healthy = async (): Promise<boolean> => {
    try {
      const response = await fetch(`http://127.0.0.1:${health}/`);
      return response.ok;
    } catch {
      return false; // not listening yet
    }
  };
  return {
    otlpHttp: `http://127.0.0.1:${http}`,
    otlpGrpc: `http://127.0.0.1:${grpc}`,
    async start() {
      if (child !== undefined) return;
      const started = spawn(path, ['--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      started.stdout?.on('data', (c: Buffer) => (output += c.toString('utf8')));
      started.stderr?.on('data', (c: Buffer) => (output += c.toString('utf8')));
      let exited = false;
      started.once('exit', () => (exited = true));
      while (!(await healthy())) {
        if (exited) throw new Error(`the collector exited while starting:\n${output.slice(-4000)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      const running = child;
      child = undefined;
      if (running === undefined || running.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
      running.kill('SIGTERM');
      // The collector drains its sending queue before it exits; on a loaded machine that has been
      // seen to hang past the test timeout. What a test asserts has arrived by then, so a collector
      // that has not exited after the grace period is killed, and the log says so.
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<'grace-over'>(
        (resolve) => (timer = setTimeout(() => resolve('grace-over'), STOP_GRACE_MS)),
      );
      if ((await Promise.race([exited, graceOver])) === 'grace-over') {
        console.warn(
          `collector-process: no exit ${STOP_GRACE_MS} ms after SIGTERM; killing it. Its log ends:\n${output.slice(-2000)}`,
        );
        running.kill('SIGKILL');
        await exited;
      }
      clearTimeout(timer);
    },
    log: () => output,
  };
}
