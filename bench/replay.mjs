/**
 * Benchmark 5, replay: MB/s of a large zstd durable session log read into
 * runs, against the floor of decompressing it and parsing each line once.
 *
 * The log is generated once: a session of five prompt turns, 1,000,000
 * session events of the chunk generation in all, written the way the
 * runtime writes them (runs of chunk deltas packed into `text-chunks` and
 * similar rows, one independent zstd frame per append batch of 10,000
 * events, compressed by the `zstd` tool through the fixture writer).
 *
 * Measured (MB/s of decompressed log text, the same bytes for every figure):
 * - replay: `LogTracker.readFile` then `emit()` into a listener that counts
 *   runs: the durable-log reader (`readDurableLog`: zstd, lines, JSON,
 *   packed-row expansion), `parseSessionEvent` on every event and the
 *   shared `RunBuilder` per epoch. No telemetry (that is per run, not per byte).
 * - floor: the same file through the project's byte reader
 *   (`wire/byte-lines`: libzstd through `node:zlib`, fed frame by frame,
 *   and the line splitter), each line `JSON.parse`d once; in this process.
 *   Node's zstd stream stops at the end of a frame, so a plain
 *   `createZstdDecompress` cannot read a file of many frames (decision 0062).
 * - when the built CLI has it, `subagent-otel replay --out <dir>` on the
 *   file, as a process with telemetry on (startup included), for reference.
 * Each of replay and floor is also measured in CPU time (`process.cpuUsage`,
 * every thread of this process: libzstd's work on Node's thread pool counts),
 * as MB of log text per CPU second: on a shared machine this ratio is the
 * steadier one.
 *
 * @module subagent-otel/bench/replay
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, benchOptions, emitResult, figure, importDist, progress } from './lib/common.mjs';
import { runEvents } from './lib/workload.mjs';

const { rounds, scale } = benchOptions({ rounds: 5 });
const EVENTS = Math.round(1_000_000 * scale);
const TURNS = 5;
const BATCH = 10_000;

const { LogTracker } = await importDist('observe/log-tracker.js');
const { ByteLineReader } = await importDist('wire/byte-lines.js');
const { packChunkRuns, compressZstdFrame } = await importDist('fixtures/durable-log-writer.js');

const work = mkdtempSync(join(tmpdir(), 'subagent-otel-bench-replay-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const logFile = join(work, 'session.jsonl.zstd');

progress(
  'replay',
  `writing a zstd durable log of ${EVENTS.toLocaleString('en-US')} events (zstd tool, one frame per ${BATCH} events)`,
);
/** All events of the session, turn after turn, with contiguous seq. */
function* sessionEvents() {
  let seq = 0;
  let time = 1_764_400_000_000;
  for (let turn = 0; turn < TURNS; turn += 1) {
    for (const event of runEvents({
      seed: 100 + turn,
      events: Math.floor(EVENTS / TURNS),
      steps: 40,
      turn,
      seqStart: seq,
      timeStart: time,
      largeEvery: 8,
      largeBytes: 32 * 1024,
    })) {
      seq = event.seq + 1;
      time = event.time;
      yield event;
    }
  }
}
const frames = [
  await compressZstdFrame(
    `${JSON.stringify({ type: 'session', version: 3, id: 'bench-session', cwd: '/work', createdAt: 1_764_400_000_000, delegationDepth: 0 })}\n`,
  ),
];
let textBytes =
  frames[0].length === 0
    ? 0
    : Buffer.byteLength(
        `${JSON.stringify({ type: 'session', version: 3, id: 'bench-session', cwd: '/work', createdAt: 1_764_400_000_000, delegationDepth: 0 })}\n`,
      );
let batch = [];
let eventCount = 0;
const writeBatch = async () => {
  const text = packChunkRuns(batch)
    .map((row) => `${JSON.stringify(row)}\n`)
    .join('');
  textBytes += Buffer.byteLength(text);
  frames.push(await compressZstdFrame(text));
  batch = [];
};
for (const event of sessionEvents()) {
  batch.push(event);
  eventCount += 1;
  if (batch.length === BATCH) await writeBatch();
}
if (batch.length > 0) await writeBatch();
writeFileSync(logFile, Buffer.concat(frames));
const fileBytes = statSync(logFile).size;
const megabytes = textBytes / 1e6;
progress(
  'replay',
  `${(fileBytes / 1e6).toFixed(1)} MB compressed, ${megabytes.toFixed(1)} MB of log text, ${eventCount.toLocaleString('en-US')} events`,
);

/** Replay through the log tracker. @returns MB/s of log text; throws unless every event and run came through. */
async function timeReplay() {
  let runs = 0;
  const listener = {
    onRunStart() {},
    onRunEnd() {
      runs += 1;
    },
    onMalformed() {},
  };
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const tracker = new LogTracker(listener);
  const result = await tracker.readFile(logFile);
  tracker.emit();
  const seconds = (performance.now() - start) / 1000;
  recordCpu('replay', cpuStart);
  if (result.records !== eventCount || result.problems !== 0 || runs !== TURNS) {
    throw new Error(
      `replay read ${result.records} records with ${result.problems} problems and ${runs} runs; expected ${eventCount}, 0, ${TURNS}`,
    );
  }
  return megabytes / seconds;
}

/** The floor: stream-decompress, split, JSON.parse each line once. @returns MB/s of log text. */
async function timeFloor() {
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  let lines = 0;
  let isComplete = true;
  const count = (items) => {
    for (const item of items) {
      if (item.kind === 'line')
        lines +=
          JSON.parse(Buffer.from(item.bytes.buffer, item.bytes.byteOffset, item.bytes.byteLength).toString('utf8')) ===
          null
            ? 0
            : 1;
      else isComplete = false;
    }
  };
  const reader = new ByteLineReader();
  for await (const chunk of createReadStream(logFile, { highWaterMark: 64 * 1024 })) count(await reader.push(chunk));
  count(await reader.end());
  const seconds = (performance.now() - start) / 1000;
  recordCpu('floor', cpuStart);
  if (!isComplete || lines === 0) throw new Error('floor: the log text did not end in a complete line');
  return megabytes / seconds;
}

/** `subagent-otel replay --out <dir> <file>` as a process. @returns MB/s of log text, startup included. */
function timeCli() {
  const out = join(work, `out-${performance.now()}`);
  const start = performance.now();
  execFileSync(process.execPath, [CLI, 'replay', '--out', out, '--json', '--no-progress', logFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
  });
  const seconds = (performance.now() - start) / 1000;
  const spans = readFileSync(join(out, 'traces.jsonl'), 'utf8').split('"name":"invoke_agent').length - 1;
  rmSync(out, { recursive: true, force: true });
  if (spans !== TURNS) throw new Error(`replay CLI exported ${spans} invoke_agent spans for ${TURNS} epochs`);
  return megabytes / seconds;
}
const hasCli = existsSync(new URL('../dist/cli/commands/replay.js', import.meta.url));

const samples = { replay: [], floor: [], cli: [] };
/** MB of log text per CPU second, per measured round (warm-up excluded). */
const cpuSamples = { replay: [], floor: [] };
let isWarm = false;
/** Records MB per CPU second since `cpuStart` for `which` (after the warm-up). */
function recordCpu(which, cpuStart) {
  const used = process.cpuUsage(cpuStart);
  if (isWarm) cpuSamples[which].push(megabytes / ((used.user + used.system) / 1e6));
}
progress('replay', 'warm-up');
await timeReplay();
await timeFloor();
isWarm = true;
for (let round = 0; round < rounds; round += 1) {
  const order = round % 2 === 0 ? ['floor', 'replay'] : ['replay', 'floor'];
  const line = [];
  for (const which of order) {
    const mbps = which === 'floor' ? await timeFloor() : await timeReplay();
    samples[which].push(mbps);
    line.push(`${which} ${mbps.toFixed(1)}`);
  }
  if (hasCli) {
    samples.cli.push(timeCli());
    line.push(`cli ${samples.cli[samples.cli.length - 1].toFixed(1)}`);
  }
  progress('replay', `round ${round + 1}/${rounds}: ${line.join(', ')} MB/s`);
}

emitResult({
  benchmark: 'replay',
  workload: { events: eventCount, turns: TURNS, compressedBytes: fileBytes, textBytes, frames: frames.length },
  figures: [
    figure({
      id: 'replay.log-tracker',
      title: 'replay of a zstd durable log (LogTracker: reader, validation, run building)',
      unit: 'MB/s',
      values: samples.replay,
      floorName: 'zstd decompress + split + JSON.parse each line once (in process)',
      floors: samples.floor,
      target: { kind: 'min-ratio', limit: 0.6, text: 'replay >= 60% of the decompress-and-parse floor' },
      notes: 'MB of decompressed log text',
    }),
    figure({
      id: 'replay.log-tracker.cpu',
      title: 'replay of a zstd durable log, per CPU second (all threads of the process)',
      unit: 'MB/CPU-s',
      values: cpuSamples.replay,
      floorName: 'zstd decompress + split + JSON.parse each line once (in process), per CPU second',
      floors: cpuSamples.floor,
      notes:
        'MB of decompressed log text per CPU second (process.cpuUsage: user + system, every thread); informational: the target is on throughput (the row above). ' +
        "Both decode zstd with libzstd on Node's thread pool (decision 0062)",
    }),
    ...(hasCli
      ? [
          figure({
            id: 'replay.cli',
            title: 'subagent-otel replay --out (process, telemetry on, startup included)',
            unit: 'MB/s',
            values: samples.cli,
            floorName: 'zstd decompress + split + JSON.parse each line once (in process)',
            floors: samples.floor,
            notes: 'reference only: includes Node startup and loading telemetry',
          }),
        ]
      : []),
  ],
});
