/**
 * Nothing lost to a collector outage (issue 35, decision 0100): the
 * project's own collector distribution is the destination, stopped while a
 * command runs and started again, and a gRPC receiver behind it counts what
 * arrived. Cases: `replay`, `watch` (down for a whole first run; down then up
 * while it runs; SIGKILLed while exporting) and `proxy`. Each counts the runs
 * seen, the distinct runs delivered and the repeats (run spans that arrived
 * more than once), and asserts every run arrived at least once, repeats only
 * where docs/RELIABILITY.md says they can happen, and the run counter
 * (`subagent.runs`) counted each run once.
 *
 * @module subagent-otel/test/stack/outbox.e2e
 */
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finished, runCli, spawnCli, type OtlpSpan } from '../helpers/cli.js';
import { collectorProcess, type CollectorProcess } from '../helpers/collector-process.js';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from '../helpers/otlp-grpc-receiver.js';
import { ROOT } from '../helpers/paths.js';
import { sharedTranscripts } from '../helpers/required-folder.js';

/** The workspace's real Claude Code sessions (outside the project; in CI a missing folder fails this file). */
const SHARED_REAL = sharedTranscripts('claude-code/real');
const REAL = SHARED_REAL ?? join(ROOT, 'shared-transcripts-missing');
/** The real Claude Code sessions hold 7 runs (their README in the shared folder). */
const REAL_RUNS = 7;
const counts: string[] = [];

let work: string;
let sink: OtlpGrpcReceiver;
let collector: CollectorProcess;

beforeEach(async () => {
  work = mkdtempSync(join(tmpdir(), 'subagent-otel-outbox-e2e-'));
  sink = await startOtlpGrpcReceiver();
  collector = await collectorProcess(work, sink.endpoint.replace(/^http:\/\//, ''));
});

afterEach(async () => {
  await collector.stop();
  await sink.close();
  rmSync(work, { recursive: true, force: true });
});

afterAll(() => {
  // The figures docs/RELIABILITY.md quotes.
  for (const line of counts) console.log(`outbox e2e: ${line}`);
});

function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpHttp,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    SUBAGENT_OTEL_OUTBOX: join(work, 'outbox'),
    OTEL_METRIC_EXPORT_INTERVAL: '600000',
    ...extra,
  };
}

const attribute = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes.find((a) => a.key === key)?.value as Record<string, unknown> | undefined;
  return value === undefined ? undefined : Object.values(value)[0];
};

/** Run spans that arrived at the sink: how many, and how many distinct. */
function arrivedRuns(): { total: number; distinct: Set<string> } {
  const runs = sink.acceptedSpans().filter((span) => attribute(span, 'gen_ai.operation.name') === 'invoke_agent');
  return { total: runs.length, distinct: new Set(runs.map((span) => `${span.traceId}/${span.spanId}`)) };
}

/** The sum of the `subagent.runs` points that arrived. */
function countedRuns(): number {
  return sink
    .acceptedMetricPoints()
    .filter((point) => point.name === 'subagent.runs')
    .reduce((sum, point) => sum + point.value, 0);
}

async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  limitMs = 240_000,
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`gave up waiting for ${what}; collector log:\n${collector.log().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Files in the outbox (records only), and the modes of its folders and files. */
function outboxFiles(): { records: string[]; modes: Set<number> } {
  const root = join(work, 'outbox');
  const records: string[] = [];
  const modes = new Set<number>();
  if (!existsSync(root)) return { records, modes };
  for (const folder of readdirSync(root)) {
    const dir = join(root, folder);
    modes.add(statSync(dir).mode & 0o777);
    for (const name of readdirSync(dir)) {
      modes.add(statSync(join(dir, name)).mode & 0o777);
      if (name.endsWith('.otlp')) records.push(name);
    }
  }
  return { records, modes };
}

describe.runIf(SHARED_REAL !== undefined)('replay', () => {
  it('with the collector down, exits 4 and keeps every run in the outbox; the next replay delivers them once', async () => {
    const down = await runCli(['replay', '--no-runs', REAL], '', env());
    const stderr = down.stderr.toString('utf8');
    expect(down.code, stderr).toBe(4);
    expect(stderr).toContain(`outbox: ${REAL_RUNS} run(s)`);
    const files = outboxFiles();
    expect(files.records.length).toBeGreaterThan(0);
    // Private: folders 0700, files 0600.
    expect([...files.modes].sort()).toEqual([0o600, 0o700]);

    await collector.start();
    // Other sessions (their own ids): what arrives twice would be a repeat of the first replay's runs.
    const other = join(ROOT, 'test', 'transcripts', 'claude-code', 'synthetic', 'subagents-2.1');
    const up = await runCli(['replay', '--no-runs', other], '', env());
    expect(up.code, up.stderr.toString('utf8')).toBe(0);
    expect(up.stderr.toString('utf8')).toContain(`outbox: delivered ${REAL_RUNS} run(s)`);
    const otherRuns = Number(/total\s+(\d+)/.exec(up.stdout.toString('utf8'))?.[1]);
    expect(otherRuns).toBeGreaterThan(0);
    const arrived = await until('every run at the sink', () => {
      const a = arrivedRuns();
      return a.distinct.size >= REAL_RUNS + otherRuns ? a : undefined;
    });
    expect(outboxFiles().records).toEqual([]);
    // Nothing was delivered twice: the first replay's runs came from the outbox only.
    expect(arrived.total).toBe(REAL_RUNS + otherRuns);
    await until('the run counters', () => (countedRuns() >= REAL_RUNS + otherRuns ? true : undefined));
    expect(countedRuns()).toBe(REAL_RUNS + otherRuns);
    counts.push(
      `replay, collector down for the first run: seen ${REAL_RUNS + otherRuns}, delivered ${arrived.distinct.size}, repeated ${arrived.total - arrived.distinct.size}`,
    );
  });
});

describe.runIf(SHARED_REAL !== undefined)('watch', () => {
  it('with the collector down for the whole first watch, checkpoints the runs as outboxed; the second watch delivers them', async () => {
    const dir = join(work, 'projects');
    cpSync(REAL, dir, { recursive: true });
    const checkpoint = join(work, 'watch.json');
    const first = spawnCli(
      ['watch', '--history', '--idle', '1', '--interval', '0.2', '--checkpoint', checkpoint, '--json', dir],
      env(),
    );
    const firstDone = finished(first);
    await until('the first watch to checkpoint every run', () => {
      if (!existsSync(checkpoint)) return undefined;
      const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { reported: Record<string, unknown> };
      return Object.keys(saved.reported).length >= REAL_RUNS ? true : undefined;
    });
    first.kill('SIGINT');
    const a = await firstDone;
    expect(a.code, a.stderr.toString('utf8')).toBe(0);
    expect(a.stdout.toString('utf8').trim().split('\n')).toHaveLength(REAL_RUNS);
    expect(a.stderr.toString('utf8')).toContain(`outbox: ${REAL_RUNS} run(s)`);
    expect(arrivedRuns().total).toBe(0);

    await collector.start();
    const second = spawnCli(
      ['watch', '--idle', '1', '--interval', '0.2', '--checkpoint', checkpoint, '--json', dir],
      env(),
    );
    const secondDone = finished(second);
    const arrived = await until('the outbox delivered by the second watch', () => {
      const r = arrivedRuns();
      return r.distinct.size >= REAL_RUNS ? r : undefined;
    });
    second.kill('SIGINT');
    const b = await secondDone;
    expect(b.code, b.stderr.toString('utf8')).toBe(0);
    expect(b.stdout.toString('utf8').trim()).toBe(''); // nothing reported again from the files
    expect(arrived.total).toBe(REAL_RUNS);
    await until('the run counters', () => (countedRuns() >= REAL_RUNS ? true : undefined));
    expect(countedRuns()).toBe(REAL_RUNS);
    counts.push(
      `watch, collector down for the first watch: seen ${REAL_RUNS}, delivered ${arrived.distinct.size}, repeated ${arrived.total - arrived.distinct.size}`,
    );
  });

  it('delivers what ended during an outage while it keeps running, once the collector is back', async () => {
    const dir = join(work, 'projects');
    cpSync(REAL, dir, { recursive: true });
    const child = spawnCli(
      [
        'watch',
        '--history',
        '--idle',
        '1',
        '--interval',
        '0.2',
        '--checkpoint',
        join(work, 'watch.json'),
        '--json',
        dir,
      ],
      env(),
    );
    const done = finished(child);
    // A record's name ends with the number of runs in it.
    const runsInOutbox = (): number =>
      outboxFiles().records.reduce((sum, name) => sum + Number(/-(\d+)\.otlp$/.exec(name)?.[1] ?? 0), 0);
    await until('every run in the outbox', () => (runsInOutbox() >= REAL_RUNS ? true : undefined));
    await collector.start();
    const arrived = await until('the running watch to drain its outbox', () => {
      const r = arrivedRuns();
      return r.distinct.size >= REAL_RUNS ? r : undefined;
    });
    child.kill('SIGINT');
    const r = await done;
    expect(r.code, r.stderr.toString('utf8')).toBe(0);
    expect(arrived.total).toBe(REAL_RUNS);
    counts.push(
      `watch, collector down then up while it runs: seen ${REAL_RUNS}, delivered ${arrived.distinct.size}, repeated ${arrived.total - arrived.distinct.size}`,
    );
  });

  it('SIGKILLed while exporting loses no run: the restarted watch sends them again or from the outbox', async () => {
    const dir = join(work, 'projects');
    cpSync(REAL, dir, { recursive: true });
    const checkpoint = join(work, 'watch.json');
    // The collector is down: each export waits out the exporter's retries, so the kill lands mid-export.
    const child = spawnCli(
      ['watch', '--history', '--idle', '1', '--interval', '0.2', '--checkpoint', checkpoint, '--json', dir],
      env(),
    );
    const done = finished(child);
    let rows = '';
    child.stdout.on('data', (c: Buffer) => (rows += c.toString('utf8')));
    // The first pass's runs are reported, and their export waits out the exporter's retries: kill now.
    await until('the first runs to be reported (and their export under way)', () =>
      rows.trim() !== '' ? true : undefined,
    );
    child.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    const checkpointed = existsSync(checkpoint)
      ? Object.keys((JSON.parse(readFileSync(checkpoint, 'utf8')) as { reported: object }).reported).length
      : 0;

    await collector.start();
    const again = spawnCli(
      ['watch', '--history', '--idle', '1', '--interval', '0.2', '--checkpoint', checkpoint, '--json', dir],
      env(),
    );
    const againDone = finished(again);
    const arrived = await until('every run after the restart', () => {
      const r = arrivedRuns();
      return r.distinct.size >= REAL_RUNS ? r : undefined;
    });
    again.kill('SIGINT');
    const r = await againDone;
    expect(r.code, r.stderr.toString('utf8')).toBe(0);
    expect(arrived.distinct.size).toBe(REAL_RUNS);
    // A repeat only when the kill fell after the outbox write and before the checkpoint (docs/RELIABILITY.md).
    expect(arrived.total - arrived.distinct.size).toBeLessThanOrEqual(checkpointed === 0 ? REAL_RUNS : 0);
    counts.push(
      `watch SIGKILLed while exporting: seen ${REAL_RUNS}, checkpointed before the kill ${checkpointed}, delivered ${arrived.distinct.size}, repeated ${arrived.total - arrived.distinct.size}`,
    );
  });
});

describe('proxy', () => {
  const prompts = (prefix: string, n: number): string =>
    Array.from(
      { length: n },
      (_, i) =>
        `${JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'session/prompt', params: { sessionId: `${prefix}${i}`, contentBlocks: [{ type: 'text', text: 'scenario:empty-message' }] } })}\n`,
    ).join('');
  const runtime = join(ROOT, 'dist', 'fixtures', 'sdk-runtime.js');

  it('puts what it could not deliver at exit into the outbox; the next proxy delivers it', async () => {
    const down = await runCli(['proxy', '--', process.execPath, runtime], prompts('down', 5), env());
    expect(down.code).toBe(0);
    expect(down.stderr.toString('utf8')).toContain('telemetry was not delivered yet: 5 run(s)');
    expect(outboxFiles().records.length).toBeGreaterThan(0);

    await collector.start();
    const up = await runCli(['proxy', '--', process.execPath, runtime], prompts('up', 5), env());
    expect(up.code).toBe(0);
    expect(up.stderr.toString('utf8')).not.toContain('not delivered');
    const arrived = await until("both proxies' runs", () => {
      const r = arrivedRuns();
      return r.distinct.size >= 10 ? r : undefined;
    });
    expect(arrived.total).toBe(10);
    expect(outboxFiles().records).toEqual([]);
    counts.push(
      `proxy, collector down for the first proxy: seen 10, delivered ${arrived.distinct.size}, repeated ${arrived.total - arrived.distinct.size}`,
    );
  });
});
