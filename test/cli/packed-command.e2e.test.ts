/**
 * The command users run delivers over every OTLP protocol (#31: over `grpc`
 * the bundle dropped every span and metric while the suite, which drove the
 * exporters from the sources, stayed green). The package is packed once
 * (`npm pack`) and installed from the tarball into a temporary prefix
 * (`npm install --global --prefix`, `scripts/packed-install.mjs`); the
 * installed `subagent-otel` and the clone's `dist/cli/subagent-otel.js`
 * each run `check`, `proxy` (in front of the scripted SDK runtime of the
 * same install), `replay` (a capture of the real runtime) and `demo`, with
 * `OTEL_EXPORTER_OTLP_PROTOCOL` `grpc`, `http/protobuf` and `http/json`,
 * plaintext and TLS (a self-signed certificate trusted through
 * `OTEL_EXPORTER_OTLP_CERTIFICATE`), against real receivers on loopback: a
 * grpc-js server and a node:http(s) server.
 *
 * Each case asserts what arrived, decoded: the span names with their counts,
 * every span, and the counter's points by stop reason, not only the exit
 * code. No wait is on time: the command exits after its exporters were
 * answered (shutdown budget 120 s, so load never decides), and a receiver
 * records a request before it answers it. Cases run one after another, one
 * command process (and its children) at a time.
 *
 * The installed `replay --jobs 2` also runs its worker thread from the
 * package (its own entry among the bundle's chunks): one CPU profile per
 * thread shows the workers ran (a worker that cannot load would leave the
 * main thread reading alone, with the same output), and its summary is
 * `--jobs 1`'s.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installPackedCommand, packPackage } from '../../scripts/packed-install.mjs';
import { ATTR_SUBAGENT_STOP_REASON } from '../../src/telemetry/semconv.js';
import { runCommand, type OtlpSpan } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';
import { startOtlpGrpcReceiver } from '../helpers/otlp-grpc-receiver.js';
import { startOtlpReceiver, type OtlpMetricPoint } from '../helpers/otlp-receiver.js';
import {
  EXPORTING_COMMANDS,
  PROTOCOLS,
  cloneCommand,
  installedCommand,
  runExporting,
  type CommandInstall,
  type ExportingCommand,
  type Protocol,
} from '../helpers/packed-command.js';
import { selfSignedCertificate, type TlsIdentity } from '../helpers/tls.js';

const work = mkdtempSync(join(tmpdir(), 'packed-command-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let tls: TlsIdentity;
let installed: CommandInstall;

beforeAll(() => {
  tls = selfSignedCertificate(work);
  installed = installedCommand(installPackedCommand(packPackage(work), mkdtempSync(join(work, 'prefix-'))));
}, 300_000);

/** A receiver of one protocol: what it took, decoded, and how it came. */
interface Receiver {
  readonly endpoint: string;
  spans(): OtlpSpan[];
  points(): OtlpMetricPoint[];
  /** `grpc` for every call of the gRPC server, the `content-type` of every request of the HTTP one. */
  arrivals(): string[];
  close(): Promise<void>;
}

async function startReceiver(protocol: Protocol, secure: boolean): Promise<Receiver> {
  const options = secure ? { tls } : {};
  if (protocol === 'grpc') {
    const grpc = await startOtlpGrpcReceiver(options);
    return {
      endpoint: grpc.endpoint,
      spans: () => grpc.acceptedSpans(),
      points: () => grpc.acceptedMetricPoints(),
      arrivals: () => grpc.exports.map(() => 'grpc'),
      close: () => grpc.close(),
    };
  }
  const http = await startOtlpReceiver({ kind: 'healthy' }, options);
  return {
    endpoint: http.endpoint,
    spans: () => http.acceptedSpans(),
    points: () => http.acceptedMetricPoints(),
    arrivals: () => http.requests.map((request) => request.headers['content-type'] ?? ''),
    close: () => http.close(),
  };
}

/** How each protocol's requests arrive: gRPC calls, or the content type of the HTTP requests. */
const ARRIVAL: Record<Protocol, string> = {
  grpc: 'grpc',
  'http/protobuf': 'application/x-protobuf',
  'http/json': 'application/json',
};

/** Span counts by name, of the names `expected` lists. */
function countsOf(spans: readonly OtlpSpan[], expected: Readonly<Record<string, number>>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const span of spans) if (span.name in expected) counts[span.name] = (counts[span.name] ?? 0) + 1;
  return counts;
}

/** The sum of `metric`'s points by stop reason (`all` for points without one). */
function sumsOf(points: readonly OtlpMetricPoint[], metric: string): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const point of points.filter((p) => p.name === metric)) {
    const reason = String(point.attributes[ATTR_SUBAGENT_STOP_REASON] ?? 'all');
    sums[reason] = (sums[reason] ?? 0) + point.value;
  }
  return sums;
}

async function deliver(
  install: CommandInstall,
  command: ExportingCommand,
  protocol: Protocol,
  secure: boolean,
): Promise<void> {
  const receiver = await startReceiver(protocol, secure);
  try {
    const r = await runExporting(install, command, {
      endpoint: receiver.endpoint,
      protocol,
      service: `packed-${command.name}`,
      ...(secure ? { certificate: tls.cert } : {}),
    });
    const stderr = r.stderr.toString('utf8');
    expect(r.code, `${stderr}\n${r.stdout.toString('utf8')}`).toBe(0);
    expect(stderr).not.toMatch(/dropped|export failed|ChannelCredentials/);
    const spans = receiver.spans();
    expect(countsOf(spans, command.spans)).toEqual(command.spans);
    expect(spans).toHaveLength(command.spanCount);
    expect(sumsOf(receiver.points(), command.metric.name)).toEqual(command.metric.byStopReason);
    expect([...new Set(receiver.arrivals())]).toEqual([ARRIVAL[protocol]]);
  } finally {
    await receiver.close();
  }
}

const INSTALLS: ReadonlyArray<{ readonly label: string; readonly get: () => CommandInstall }> = [
  { label: 'installed tarball', get: () => installed },
  { label: 'clone dist', get: cloneCommand },
];

for (const { label, get } of INSTALLS) {
  describe(`the ${label}`, () => {
    for (const protocol of PROTOCOLS) {
      for (const secure of [false, true]) {
        for (const command of EXPORTING_COMMANDS) {
          it(`${command.name} delivers its spans and metrics over ${protocol} (${secure ? 'TLS' : 'plaintext'}), decoded`, () =>
            deliver(get(), command, protocol, secure));
        }
      }
    }
  });
}

describe('the installed tarball with worker threads', () => {
  it('replay --jobs 2 reads on worker threads (one CPU profile per thread) and says what --jobs 1 says', async () => {
    const sessions = join(ROOT, 'test', 'transcripts', 'claude-code', 'synthetic');
    const profiles = mkdtempSync(join(work, 'profiles-'));
    const run = async (jobs: string, env: NodeJS.ProcessEnv): Promise<unknown> => {
      const out = mkdtempSync(join(work, `jobs-${jobs}-`));
      const r = await runCommand(installed.file, ['replay', '--jobs', jobs, '--json', '--out', out, sessions], '', {
        PATH: `${join(process.execPath, '..')}:${process.env['PATH'] ?? ''}`,
        OTEL_EXPORTER_OTLP_ENDPOINT: '',
        ...env,
      });
      expect(r.code, r.stderr.toString('utf8')).toBe(0);
      return JSON.parse(r.stdout.toString('utf8').split(out).join('<out>')) as unknown;
    };
    const one = await run('1', {});
    const two = await run('2', { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profiles}` });
    expect(two).toEqual(one);
    expect(readdirSync(profiles).filter((name) => name.endsWith('.cpuprofile'))).toHaveLength(3);
  });
});
