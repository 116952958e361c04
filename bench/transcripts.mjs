/**
 * Benchmark 7, transcripts: replay of a Claude Code history of at least
 * 1 GB (scale 1) against the floor of reading the same files and parsing
 * each line once, and the peak memory of the command doing it.
 *
 * The history is copies of the real public sessions in
 * `../shared/transcripts/claude-code/real/` (the workspace's real sessions; not part of the project) (`lib/claude-history.mjs`: fresh ids,
 * same bytes otherwise) laid out as `~/.claude/projects` is.
 *
 * Measured (MB/s of transcript text, the same bytes for every figure):
 * - replay: `replayPaths` on the directory into a listener that counts runs:
 *   the walk, sniffing each file by content, the Claude Code reader
 *   (validation, request dedupe, subagent linking, the one rule through the
 *   shared `RunBuilder`) and pricing every run. No telemetry.
 * - floor: every file of the directory read (64 KiB chunks), split at
 *   newlines and each line `JSON.parse`d once, in this process.
 * - the command: `subagent-otel replay --out <dir> --json <history>` as a
 *   process with telemetry on (spans and metrics to files): its wall-clock
 *   MB/s and its peak RSS (`peers/peak-rss.mjs`), which must stay bounded
 *   whatever the history's size (the target: below 512 MiB for 1 GB).
 *
 * @module subagent-otel/bench/transcripts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLI,
  ROOT,
  benchOptions,
  emitResult,
  figure,
  filesUnder,
  importDist,
  progress,
  readAndParseSeconds,
} from './lib/common.mjs';
import { writeClaudeHistory } from './lib/claude-history.mjs';

const { rounds, scale } = benchOptions({ rounds: 3 });
const MIN_BYTES = Math.round(1e9 * scale);

const { replayPaths } = await importDist('replay/replay.js');

const work = mkdtempSync(join(tmpdir(), 'subagent-otel-bench-transcripts-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const history = join(work, 'claude');
progress(
  'transcripts',
  `writing a Claude Code history of at least ${(MIN_BYTES / 1e6).toFixed(0)} MB from the real sessions`,
);
const written = writeClaudeHistory(join(ROOT, '..', 'shared', 'transcripts', 'claude-code', 'real'), history, {
  minBytes: MIN_BYTES,
});
const megabytes = written.bytes / 1e6;
progress(
  'transcripts',
  `${megabytes.toFixed(0)} MB in ${written.files.toLocaleString('en-US')} files (${written.copies} copies of the sessions)`,
);

const files = filesUnder(history);

let expectedRuns;
/** @returns MB/s of the replay in this process; throws unless it read everything without a problem. */
async function timeReplay() {
  let runs = 0;
  const listener = {
    onRunStart() {},
    onRunEnd() {
      runs += 1;
    },
    onMalformed() {},
  };
  const start = performance.now();
  const summary = await replayPaths([history], listener, {});
  const seconds = (performance.now() - start) / 1000;
  if (summary.problems !== 0 || summary.runs !== runs)
    throw new Error(
      `replay gave ${summary.problems} problems, ${summary.runs} runs in the summary and ${runs} at the listener`,
    );
  if (expectedRuns !== undefined && runs !== expectedRuns)
    throw new Error(`replay gave ${runs} runs, an earlier round ${expectedRuns}`);
  expectedRuns = runs;
  return megabytes / seconds;
}

/** The floor: read, split, JSON.parse each line once. @returns MB/s. */
async function timeFloor() {
  return megabytes / (await readAndParseSeconds(files));
}

/** The command as a process. @returns `{ mbps, peakRss }`. */
function timeCli() {
  const out = join(work, `out-${performance.now()}`);
  const prefix = join(work, 'rss');
  const start = performance.now();
  const stdout = execFileSync(
    process.execPath,
    [
      '--import',
      join(ROOT, 'bench', 'peers', 'peak-rss.mjs'),
      CLI,
      'replay',
      '--out',
      out,
      '--json',
      '--no-progress',
      history,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', BENCH_PEAK_RSS_PREFIX: prefix },
    },
  );
  const seconds = (performance.now() - start) / 1000;
  const summary = JSON.parse(stdout.toString('utf8'));
  if (summary.runs !== expectedRuns || summary.problems !== 0)
    throw new Error(
      `the command gave ${summary.runs} runs and ${summary.problems} problems; expected ${expectedRuns}, 0`,
    );
  const peakRss = peakRssFiles(prefix);
  const spans = readFileSync(join(out, 'traces.jsonl'), 'utf8').split('"name":"invoke_agent').length - 1;
  rmSync(out, { recursive: true, force: true });
  if (spans !== expectedRuns)
    throw new Error(`the command exported ${spans} invoke_agent spans for ${expectedRuns} runs`);
  return { mbps: megabytes / seconds, peakRss };
}

/** The peak RSS the preload wrote for the one process of `prefix`, in MiB (then removes its file). */
function peakRssFiles(prefix) {
  const dir = join(prefix, '..');
  const mine = readdirSync(dir).filter((name) => name.startsWith('rss.'));
  if (mine.length !== 1) throw new Error(`expected one peak-RSS file, found ${mine.length}`);
  const path = join(dir, mine[0]);
  const [bytes] = readFileSync(path, 'utf8').split(' ');
  rmSync(path);
  return Number(bytes) / (1024 * 1024);
}

progress('transcripts', 'warm-up');
await timeReplay();
await timeFloor();
const samples = { replay: [], floor: [], cli: [], rss: [], cliFloor: [] };
for (let round = 0; round < rounds; round += 1) {
  const order = round % 2 === 0 ? ['floor', 'replay'] : ['replay', 'floor'];
  const line = [];
  let floorNow = 0;
  for (const which of order) {
    const mbps = which === 'floor' ? await timeFloor() : await timeReplay();
    if (which === 'floor') floorNow = mbps;
    samples[which].push(mbps);
    line.push(`${which} ${mbps.toFixed(1)}`);
  }
  const cli = timeCli();
  samples.cli.push(cli.mbps);
  samples.cliFloor.push(floorNow);
  samples.rss.push(cli.peakRss);
  line.push(`cli ${cli.mbps.toFixed(1)} MB/s at ${cli.peakRss.toFixed(0)} MiB peak`);
  progress('transcripts', `round ${round + 1}/${rounds}: ${line.join(', ')} (${expectedRuns} runs)`);
}

emitResult({
  benchmark: 'transcripts',
  workload: { bytes: written.bytes, files: written.files, copies: written.copies, runs: expectedRuns },
  figures: [
    figure({
      id: 'transcripts.replay',
      title: `replay of a ${(written.bytes / 1e9).toFixed(2)} GB Claude Code history (walk, sniffing, reader, rule, pricing)`,
      unit: 'MB/s',
      values: samples.replay,
      floorName: 'read + split + JSON.parse each line once (in process)',
      floors: samples.floor,
      target: { kind: 'min-ratio', limit: 0.8, text: 'replay >= 80% of the read-and-parse floor' },
      notes: 'MB of transcript text; no telemetry',
    }),
    figure({
      id: 'transcripts.cli',
      title: 'subagent-otel replay --out on that history (process, telemetry to files, startup included)',
      unit: 'MB/s',
      values: samples.cli,
      floorName: 'read + split + JSON.parse each line once (in process)',
      floors: samples.cliFloor,
      notes: 'reference: spans and metrics of every run written to traces.jsonl and metrics.jsonl',
    }),
    figure({
      id: 'transcripts.cli.peak-rss',
      title: 'peak RSS of subagent-otel replay on that history',
      unit: 'MiB',
      values: samples.rss,
      floorName: 'the same (no floor)',
      floors: samples.rss,
      target: { kind: 'max-value', limit: 512, text: 'peak RSS below 512 MiB for a 1 GB history: bounded memory' },
      notes: 'resident set at its highest, as the process itself reports it at exit',
    }),
  ],
});
