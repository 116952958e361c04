/**
 * The command as users install it, into the project's own collector
 * distribution (#31). The package is packed and installed from the tarball
 * into a temporary prefix (`scripts/packed-install.mjs`); the installed
 * `subagent-otel` runs `check`, `proxy` (in front of the scripted runtime it
 * ships), `replay` (the real runtime's capture) and `demo` over
 * `OTEL_EXPORTER_OTLP_PROTOCOL` `grpc`, `http/protobuf` and `http/json`, to
 * the single-tier stack (otelcol.yaml on the subagent-otelcol engine,
 * Jaeger, Prometheus 3, Alertmanager) in plaintext, and over TLS to a second
 * OTLP receiver, `otlp/tls`, that an overlay adds to both pipelines (the
 * shipped configs serve no TLS; the overlay takes a self-signed certificate
 * and is loaded after otelcol.yaml, as compose loads otelcol.files.yaml).
 *
 * Each case has a service name of its own and waits until what arrived is
 * complete: every span in Jaeger (its query API, by operation name), and the
 * counter at the collector's Prometheus exporter by stop reason, each
 * exactly the literal the scenario gives; the collector's own
 * `otelcol_receiver_accepted_spans` of the receiver and transport the case
 * aimed at (`otlp` or `otlp/tls`, `grpc` or `http`) grew by every span. The waits poll conditions with a
 * 300 s budget; no figure depends on speed.
 *
 * @module subagent-otel/test/stack/packed-command.e2e
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { installPackedCommand, packPackage } from '../../scripts/packed-install.mjs';
import { startStack, type Stack } from '../../scripts/stack/stack.mjs';
import {
  EXPORTING_COMMANDS,
  PROTOCOLS,
  installedCommand,
  runExporting,
  type CommandInstall,
  type ExportingCommand,
  type Protocol,
} from '../helpers/packed-command.js';
import { selfSignedCertificate, type TlsIdentity } from '../helpers/tls.js';
import { CONFIG_DIR } from './engines.js';
import { jaegerTraces, scrapeSum, waitFor } from './observed.js';

let dir: string;
let stack: Stack;
let tls: TlsIdentity;
let installed: CommandInstall;
/** The overlay's TLS receiver: `host:port` of its gRPC and HTTP protocols. */
let tlsPorts: { grpc: number; http: number };

/** Two free loopback ports (opened at once so they differ, then closed for the collector to take). */
async function freePorts(): Promise<[number, number]> {
  const servers = await Promise.all(
    [0, 1].map(
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return [ports[0] as number, ports[1] as number];
}

/** The overlay: an `otlp/tls` receiver with the certificate, added to the receivers of every pipeline of otelcol.yaml. */
function tlsOverlay(identity: TlsIdentity, ports: { grpc: number; http: number }): string {
  const base = parse(readFileSync(join(CONFIG_DIR, 'otelcol.yaml'), 'utf8')) as {
    service: { pipelines: Record<string, { receivers: string[] }> };
  };
  const tlsSettings = { cert_file: identity.cert, key_file: identity.key };
  const pipelines = Object.fromEntries(
    Object.entries(base.service.pipelines).map(([name, pipeline]) => [
      name,
      { receivers: [...pipeline.receivers, 'otlp/tls'] },
    ]),
  );
  return stringify({
    receivers: {
      'otlp/tls': {
        protocols: {
          grpc: { endpoint: `127.0.0.1:${ports.grpc}`, tls: tlsSettings },
          http: { endpoint: `127.0.0.1:${ports.http}`, tls: tlsSettings },
        },
      },
    },
    service: { pipelines },
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'subagent-otel-stack-packed-'));
  tls = selfSignedCertificate(dir);
  installed = installedCommand(installPackedCommand(packPackage(dir), mkdtempSync(join(dir, 'prefix-'))));
  const [grpc, http] = await freePorts();
  tlsPorts = { grpc, http };
  const overlay = join(dir, 'otelcol.tls.yaml');
  writeFileSync(overlay, tlsOverlay(tls, tlsPorts));
  stack = await startStack({ dir: join(dir, 'stack'), tiers: 1, ports: 'free', collectorConfigs: [overlay] });
}, 600_000);

afterAll(async () => {
  await stack?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/**
 * The collector's endpoint for a protocol: plaintext on the stack's own receiver, TLS on the overlay's (gRPC by
 * host name: grpc-js sets the TLS server name to the endpoint's host, and the certificate names localhost).
 */
function endpointOf(protocol: Protocol, secure: boolean): string {
  if (!secure) return protocol === 'grpc' ? stack.urls.otlpGrpc : stack.urls.otlpHttp;
  return protocol === 'grpc' ? `https://localhost:${tlsPorts.grpc}` : `https://127.0.0.1:${tlsPorts.http}`;
}

/** Spans by operation name of `service` in Jaeger, of the names `expected` lists, and all of them. */
async function spansInJaeger(
  service: string,
  expected: Readonly<Record<string, number>>,
): Promise<{ counts: Record<string, number>; total: number }> {
  // Since 2020: replay stamps its spans with the capture's recorded times, which age with the repository.
  const spans = (await jaegerTraces(stack.urls.jaeger, service, {}, 1000, Date.UTC(2020, 0, 1))).flatMap(
    (trace) => trace.spans,
  );
  const counts: Record<string, number> = {};
  for (const span of spans)
    if (span.operationName in expected) counts[span.operationName] = (counts[span.operationName] ?? 0) + 1;
  return { counts, total: spans.length };
}

/** The counter of `command` at the collector's Prometheus exporter, by stop reason, for `service`. */
async function counterAtCollector(command: ExportingCommand, service: string): Promise<Record<string, number>> {
  const url = stack.urls.collectors.collector?.metrics ?? '';
  const name = `${command.metric.name.replaceAll('.', '_')}_total`;
  const sums: Record<string, number> = {};
  for (const reason of Object.keys(command.metric.byStopReason)) {
    sums[reason] = await scrapeSum(
      url,
      name,
      reason === 'all' ? { job: service } : { job: service, subagent_stop_reason: reason },
    );
  }
  return sums;
}

async function deliver(command: ExportingCommand, protocol: Protocol, secure: boolean): Promise<void> {
  const service = `packed-${command.name}-${protocol.replace('/', '-')}-${secure ? 'tls' : 'plain'}`;
  // Which receiver took them, by the collector's own count: the overlay's for TLS, the stack's own otherwise.
  const telemetry = stack.urls.collectors.collector?.telemetry ?? '';
  const receiver = { receiver: secure ? 'otlp/tls' : 'otlp', transport: protocol === 'grpc' ? 'grpc' : 'http' };
  const acceptedBefore = await scrapeSum(telemetry, 'otelcol_receiver_accepted_spans', receiver);
  const r = await runExporting(installed, command, {
    endpoint: endpointOf(protocol, secure),
    protocol,
    service,
    ...(secure ? { certificate: tls.cert } : {}),
  });
  const stderr = r.stderr.toString('utf8');
  expect(r.code, `${stderr}\n${r.stdout.toString('utf8')}`).toBe(0);
  expect(stderr).not.toMatch(/dropped|export failed|ChannelCredentials/);
  const arrived = await settled(
    `the spans of ${service} in Jaeger`,
    () => spansInJaeger(service, command.spans),
    (found) => found.total >= command.spanCount,
  );
  expect(arrived).toEqual({ counts: command.spans, total: command.spanCount });
  expect((await scrapeSum(telemetry, 'otelcol_receiver_accepted_spans', receiver)) - acceptedBefore).toBe(
    command.spanCount,
  );
  const expected = JSON.stringify(command.metric.byStopReason);
  const counted = await settled(
    `${command.metric.name} of ${service} at the collector`,
    () => counterAtCollector(command, service),
    (sums) => JSON.stringify(sums) === expected,
  );
  expect(counted).toEqual(command.metric.byStopReason);
}

/**
 * Polls `probe` (`waitFor`, 300 s) until `done` accepts its value; @returns that value, or after the budget the
 * last value seen, so the caller's assertion shows what did arrive.
 */
async function settled<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean): Promise<T | undefined> {
  let last: T | undefined;
  try {
    return await waitFor(what, async () => {
      last = await probe();
      return done(last) ? last : undefined;
    });
  } catch (error) {
    // The budget ran out (or the engine's API kept failing): hand back what was there, for the assertion's diff.
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return last;
  }
}

describe('the installed tarball into the own collector distribution', () => {
  for (const protocol of PROTOCOLS) {
    for (const secure of [false, true]) {
      for (const command of EXPORTING_COMMANDS) {
        it(
          `${command.name} over ${protocol} (${secure ? 'TLS' : 'plaintext'}): every span in Jaeger, the counter at the collector`,
          () => deliver(command, protocol, secure),
          330_000,
        );
      }
    }
  }
});
