/**
 * A bounded soak: the real proxy in front of the scripted SDK runtime
 * fixture (behind a recording tee), driven for a fixed number of prompts
 * (not a fixed time: a busy machine answers fewer per second) with a mixed
 * workload (every scenario of the fixture, four sessions in flight,
 * malformed client lines), exporting to a collector that is dead (connection
 * refused) for the first part of the run and then recovers.
 *
 * At the end: every run is accounted for (each span either accepted by the
 * collector or counted in `subagent.telemetry.dropped`, and the runs in the
 * `--out` file match the client's own tally by stop reason), the proxy's RSS
 * stayed flat, and the bytes forwarded are identical in both directions.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ATTR_SUBAGENT_STOP_REASON } from '../../src/telemetry/semconv.js';
import { attributes, rpc, spawnCli } from '../helpers/cli.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { FIXTURE_SDK_RUNTIME } from '../helpers/paths.js';
import { pollUntil } from '../helpers/prometheus.js';
import { droppedTotal, fileMetricPoints, fileSpans, rssKiB } from './workload.js';

/** Prompts sent in all (about 25 s on an idle 2-core machine; the RSS is sampled every 50 answers). */
const SOAK_PROMPTS = 10_000;
/** Test budget: about 10x what the prompts take on a loaded 2-core machine. */
const SOAK_BUDGET_MS = 600_000;
/** Prompts in flight at once, on different sessions. */
const IN_FLIGHT = 4;
/** Answers after which the dead collector comes back. */
const RECOVER_AFTER = 300;

/** Scenario -> the stop reasons of the runs it produces (a delegating scenario also produces its child's run). */
const SCENARIO_RUNS: Record<string, string[]> = {
  completed: ['completed'],
  'empty-message': ['max-tokens'],
  'multi-step-max-tokens': ['max-tokens'],
  'cancelled-attempt': ['aborted'],
  subagent: ['completed', 'max-tokens'],
  'subagent-wrong-report': ['completed', 'max-tokens'],
  'reasoning-only': ['completed'],
  error: ['error'],
  malformed: ['completed'],
  'no-output': ['completed'],
};
const SCENARIOS = Object.keys(SCENARIO_RUNS);

/**
 * A recording tee between the proxy and the runtime: `node -e TEE <stdin file> <stdout file> <command...>`
 * copies what the runtime reads and writes to the two files, so the test can
 * compare them with what the client sent and received.
 */
const TEE = String.raw`
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const [inFile, outFile, command, ...args] = process.argv.slice(1);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
const seenIn = fs.createWriteStream(inFile);
const seenOut = fs.createWriteStream(outFile);
process.stdin.on('data', (chunk) => seenIn.write(chunk));
process.stdin.pipe(child.stdin);
child.stdin.on('error', () => {});
child.stdout.on('data', (chunk) => seenOut.write(chunk));
child.stdout.pipe(process.stdout);
child.on('close', (code) => {
  let open = 2;
  const done = () => { if (--open === 0) { process.exitCode = code ?? 1; process.stdin.destroy(); } };
  seenIn.end(done);
  seenOut.end(done);
});
`;

const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});

describe('soak', () => {
  it(
    'accounts for every run, keeps RSS flat and forwards identical bytes through a dead-then-recovering collector',
    async () => {
      const receiver = await startOtlpReceiver({ kind: 'refuse' });
      receivers.push(receiver);
      const dir = mkdtempSync(join(tmpdir(), 'soak-'));
      const out = join(dir, 'otel');
      const seenIn = join(dir, 'runtime-stdin.bin');
      const seenOut = join(dir, 'runtime-stdout.bin');
      const child = spawnCli(
        [
          'proxy',
          '--out',
          out,
          '--',
          process.execPath,
          '-e',
          TEE,
          seenIn,
          seenOut,
          process.execPath,
          FIXTURE_SDK_RUNTIME,
        ],
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_EXPORTER_OTLP_TIMEOUT: '500',
          OTEL_BSP_SCHEDULE_DELAY: '100',
          OTEL_METRIC_EXPORT_INTERVAL: '2000',
          SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '60000',
        },
      );
      const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));

      const sentHash = createHash('sha256');
      const receivedHash = createHash('sha256');
      let sentBytes = 0;
      let receivedBytes = 0;
      const send = (text: string): void => {
        const bytes = Buffer.from(text);
        sentHash.update(bytes);
        sentBytes += bytes.length;
        child.stdin.write(bytes);
      };

      const pending = new Map<number, () => void>();
      // The runtime answers a prompt on queueing; its run is over at the session's next idle (turns of a session run in order).
      const turnsOf = new Map<string, Array<() => void>>();
      let partial = '';
      child.stdout.on('data', (chunk: Buffer) => {
        receivedHash.update(chunk);
        receivedBytes += chunk.length;
        partial += chunk.toString('latin1');
        let nl = partial.indexOf('\n');
        while (nl !== -1) {
          const line = partial.slice(0, nl);
          partial = partial.slice(nl + 1);
          nl = partial.indexOf('\n');
          const id = /^\{"jsonrpc":"2\.0","id":(\d+),"(result|error)"/.exec(line)?.[1];
          if (id !== undefined) pending.get(Number(id))?.();
          const idle =
            /^\{"jsonrpc":"2\.0","method":"session\.status","params":\{"sessionId":"([^"]+)","status":"idle"/.exec(
              line,
            )?.[1];
          if (idle !== undefined) turnsOf.get(idle)?.shift()?.();
        }
      });

      const answer = (id: number): Promise<void> => new Promise((resolve) => pending.set(id, resolve));
      const turnDone = (sessionId: string): Promise<void> =>
        new Promise((resolve) => {
          const queue = turnsOf.get(sessionId) ?? [];
          queue.push(resolve);
          turnsOf.set(sessionId, queue);
        });
      send(rpc(1, 'initialize', { cwd: '/', provider: 'deepseek', model: 'deepseek-chat' }));
      await answer(1);

      const expected: Record<string, number> = {};
      const rss: number[] = [];
      const inFlight = new Set<Promise<void>>();
      let next = 2;
      let answered = 0;
      let recovered = false;
      let sampledAt = 0;
      while (next - 2 < SOAK_PROMPTS) {
        while (inFlight.size < IN_FLIGHT && next - 2 < SOAK_PROMPTS) {
          const id = next++;
          const scenario = SCENARIOS[id % SCENARIOS.length]!;
          if (id % 7 === 0) send('this line is not JSON-RPC {\n');
          const done = turnDone(`soak-${id % IN_FLIGHT}`).then(() => {
            inFlight.delete(done);
            answered += 1;
            for (const stop of SCENARIO_RUNS[scenario]!) expected[stop] = (expected[stop] ?? 0) + 1;
          });
          inFlight.add(done);
          send(
            rpc(id, 'session/prompt', {
              sessionId: `soak-${id % IN_FLIGHT}`,
              contentBlocks: [{ type: 'text', text: `scenario:${scenario}` }],
            }),
          );
        }
        await Promise.race(inFlight);
        if (answered - sampledAt >= 50) {
          sampledAt = answered;
          const sample = rssKiB(child.pid!);
          if (sample !== undefined) rss.push(sample);
        }
        if (!recovered && answered >= RECOVER_AFTER) {
          recovered = true;
          // Recover only once the proxy has counted spans the dead collector cost (a condition, not a time:
          // a fast machine answers 300 prompts before an export gives up).
          await pollUntil(async () => (droppedTotal(fileMetricPoints(out), 'traces', 'otlp') > 0 ? true : undefined), {
            what: 'the proxy to count spans dropped while the collector was dead',
            timeoutMs: 120_000,
          });
          await receiver.setMode({ kind: 'healthy' });
        }
      }
      await Promise.all(inFlight);
      send(rpc(next, 'shutdown'));
      child.stdin.end();
      const code = await exited;

      // Identical bytes both ways.
      expect(code).toBe(0);
      const runtimeIn = readFileSync(seenIn);
      const runtimeOut = readFileSync(seenOut);
      expect(runtimeIn.length).toBe(sentBytes);
      expect(createHash('sha256').update(runtimeIn).digest('hex')).toBe(sentHash.digest('hex'));
      expect(runtimeOut.length).toBe(receivedBytes);
      expect(createHash('sha256').update(runtimeOut).digest('hex')).toBe(receivedHash.digest('hex'));

      // Every run observed, with the stop reason the client's tally says.
      const spans = fileSpans(out);
      const observed: Record<string, number> = {};
      for (const span of spans.filter((s) => s.name.startsWith('invoke_agent'))) {
        const stop = String(attributes(span)[ATTR_SUBAGENT_STOP_REASON]);
        observed[stop] = (observed[stop] ?? 0) + 1;
      }
      expect(answered).toBe(SOAK_PROMPTS);
      expect(observed).toEqual(expected);

      // Every span delivered once the collector recovered, or counted as dropped while it was dead.
      const delivered = new Set(receiver.acceptedSpans().map((s) => s.spanId)).size;
      const dropped = droppedTotal(fileMetricPoints(out), 'traces', 'otlp');
      expect(delivered).toBeGreaterThan(0);
      expect(dropped).toBeGreaterThan(0);
      expect(delivered + dropped).toBe(spans.length);

      // RSS flat: the second half of the run peaks no more than 40 MiB above the first half.
      const half = Math.floor(rss.length / 2);
      expect(rss.length).toBeGreaterThan(8);
      expect(Math.max(...rss.slice(half)) - Math.max(...rss.slice(0, half))).toBeLessThan(40 * 1024);
    },
    SOAK_BUDGET_MS,
  );
});
