/**
 * Benchmark 11, replay beside ccusage (issue 40): a Claude Code history of
 * about 300 MB (scale 1; copies of the workspace's real sessions in
 * `../shared/transcripts/claude-code/real/` with fresh ids,
 * `lib/claude-history.mjs`, laid out as `$CLAUDE_CONFIG_DIR/projects`), read
 * by `subagent-otel replay --out` (telemetry to files) with `--jobs 1` (one
 * thread) and `--jobs 2` (two worker threads reading sessions), and by
 * ccusage 18 (TypeScript) and 20 (Rust), `session --json --offline`,
 * installed into a temporary folder from the npm registry (so the benchmark
 * needs it). Each command is timed as a process under `/usr/bin/time` (wall
 * seconds and peak RSS), rounds rotating the order. Figures: `--jobs 2`'s
 * wall time against each ccusage's (the aims: ahead of 18, within 2x of
 * 20), `--jobs 1`'s against `--jobs 2`'s (the aim: two cores at least 1.7
 * times one), peak RSS of each (the aim: under 256 MiB), and `--jobs 1`
 * against the floor of reading, splitting and `JSON.parse`-ing every line in
 * one Node thread, in this process. The load averages at the start and the
 * end are in the figures' notes: on a busy machine two threads do not get
 * two cores.
 *
 * ccusage reads usage and cost per session; replay builds every run (the
 * one rule, subagents nested, stop reasons) and exports spans and metrics:
 * they do not do the same work, and the figures say how far apart they are.
 *
 * @module subagent-otel/bench/ccusage
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeClaudeHistory } from './lib/claude-history.mjs';
import {
  CLI,
  ROOT,
  benchOptions,
  emitResult,
  figure,
  filesUnder,
  progress,
  readAndParseSeconds,
} from './lib/common.mjs';

const { rounds, scale } = benchOptions({ rounds: 3 });
const MIN_BYTES = Math.round(300 * 1024 * 1024 * scale);
const PEERS = { 'ccusage 18': '18.0.11', 'ccusage 20': '20.0.24' };

const work = mkdtempSync(join(tmpdir(), 'subagent-otel-bench-ccusage-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const configDir = join(work, 'claude');
const history = join(configDir, 'projects');
progress('ccusage', `writing a Claude Code history of at least ${(MIN_BYTES / 2 ** 20).toFixed(0)} MiB`);
const written = writeClaudeHistory(join(ROOT, '..', 'shared', 'transcripts', 'claude-code', 'real'), history, {
  minBytes: MIN_BYTES,
});
const megabytes = written.bytes / 1e6;

/** Installs `ccusage@version` into its own folder; @returns the path of its `ccusage` command. */
function install(version) {
  const prefix = join(work, `ccusage-${version}`);
  progress('ccusage', `npm install ccusage@${version}`);
  execFileSync('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', `ccusage@${version}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return join(prefix, 'node_modules', '.bin', 'ccusage');
}
/** `subagent-otel replay` with `--jobs <jobs>`, telemetry to a fresh folder. */
const replayCommand = (jobs) => () => [
  process.execPath,
  CLI,
  'replay',
  '--jobs',
  String(jobs),
  '--out',
  join(work, `out-${performance.now()}`),
  '--json',
  '--no-progress',
  history,
];
const ONE = 'replay --jobs 1';
const TWO = 'replay --jobs 2';
const commands = { [ONE]: replayCommand(1), [TWO]: replayCommand(2) };
for (const [name, version] of Object.entries(PEERS)) {
  const bin = install(version);
  commands[name] = () => [bin, 'session', '--json', '--offline'];
}

/** Runs `argv` under /usr/bin/time; @returns `{ seconds, peakMiB, stdout }`. */
function timed(argv) {
  const report = join(work, 'time.txt');
  const stdout = execFileSync('/usr/bin/time', ['-f', '%e %M', '-o', report, ...argv], {
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 256 * 1024 * 1024,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: work,
      CLAUDE_CONFIG_DIR: configDir,
      SUBAGENT_OTEL_OUTBOX: 'off',
      SUBAGENT_OTEL_CODE_CACHE: 'off',
      TZ: 'UTC',
    },
  });
  const [seconds, kib] = readFileSync(report, 'utf8').trim().split('\n').pop().split(' ').map(Number);
  return { seconds, peakMiB: kib / 1024, stdout: stdout.toString('utf8') };
}

const files = filesUnder(history).filter((file) => file.endsWith('.jsonl'));
const loadStart = loadavg();

const names = Object.keys(commands);
const samples = Object.fromEntries(names.map((name) => [name, { seconds: [], peak: [] }]));
const floors = [];
let runs;
for (let round = 0; round < rounds; round += 1) {
  const order = names.map((_, i) => names[(i + round) % names.length]);
  const line = [];
  for (const name of order) {
    const result = timed(commands[name]());
    if (name === ONE || name === TWO) {
      const summary = JSON.parse(result.stdout);
      if (summary.problems !== 0 || (runs !== undefined && summary.runs !== runs))
        throw new Error(`replay gave ${summary.runs} runs and ${summary.problems} problems`);
      runs = summary.runs;
    } else {
      // ccusage 18 prints `{ sessions: [...] }`, 20 `{ session: [...] }`: either must list the history's sessions.
      const printed = JSON.parse(result.stdout);
      const sessions = printed.sessions ?? printed.session ?? printed;
      if (!Array.isArray(sessions) || sessions.length === 0)
        throw new Error(`${name} printed no sessions: ${result.stdout.slice(0, 200)}`);
    }
    samples[name].seconds.push(result.seconds);
    samples[name].peak.push(result.peakMiB);
    line.push(`${name} ${result.seconds.toFixed(2)} s ${result.peakMiB.toFixed(0)} MiB`);
  }
  floors.push(await readAndParseSeconds(files));
  progress('ccusage', `round ${round + 1}/${rounds}: ${line.join(', ')}, floor ${floors.at(-1).toFixed(2)} s`);
}

const replay = samples[TWO];
const loadEnd = loadavg();
const load = `load averages (1, 5, 15 min) ${loadStart.map((l) => l.toFixed(2)).join(', ')} at the start, ${loadEnd.map((l) => l.toFixed(2)).join(', ')} at the end, ${cpus().length} cores`;
const peak = (name) =>
  `${name} peak RSS median ${[...samples[name].peak].sort((a, b) => a - b)[Math.floor(samples[name].peak.length / 2)].toFixed(0)} MiB`;
const size = `${(written.bytes / 2 ** 20).toFixed(0)} MiB Claude Code history (${written.files} files, ${runs} runs)`;
emitResult({
  benchmark: 'ccusage',
  workload: { bytes: written.bytes, files: written.files, runs, peers: PEERS },
  figures: [
    figure({
      id: 'ccusage.replay-vs-18',
      title: `subagent-otel replay --jobs 2 --out beside ccusage 18 session --json --offline, ${size}`,
      unit: 's',
      values: replay.seconds,
      floorName: 'ccusage 18.0.11 (TypeScript) on the same history',
      floors: samples['ccusage 18'].seconds,
      target: { kind: 'max-ratio', limit: 1, text: 'ahead of ccusage 18 (issue 40)' },
      notes: `wall time of each process; ${peak(TWO)}, ${peak('ccusage 18')}; ${load}`,
    }),
    figure({
      id: 'ccusage.replay-vs-20',
      title: `subagent-otel replay --jobs 2 --out beside ccusage 20 session --json --offline, ${size}`,
      unit: 's',
      values: replay.seconds,
      floorName: 'ccusage 20.0.24 (Rust) on the same history',
      floors: samples['ccusage 20'].seconds,
      target: { kind: 'max-ratio', limit: 2, text: 'within 2x of ccusage 20 (issue 40)' },
      notes: `wall time of each process; ${peak('ccusage 20')}`,
    }),
    figure({
      id: 'ccusage.jobs2-speedup',
      title: `replay --jobs 2 against --jobs 1 (speedup of two threads), ${size}`,
      unit: 's',
      values: samples[ONE].seconds,
      floorName: 'replay --jobs 2, same round',
      floors: samples[TWO].seconds,
      target: { kind: 'min-ratio', limit: 1.7, text: 'two cores at least 1.7 times one (issue 40)' },
      notes: `ratio: --jobs 1 seconds / --jobs 2 seconds; ${load}`,
    }),
    figure({
      id: 'ccusage.replay-peak-rss',
      title: `replay peak RSS, --jobs 2 (floor: --jobs 1), ${size}`,
      unit: 'MiB',
      values: samples[TWO].peak,
      floorName: 'replay --jobs 1 peak RSS, same round',
      floors: samples[ONE].peak,
      target: { kind: 'max-value', limit: 256, text: 'peak RSS under 256 MiB whatever the size (issue 40)' },
      notes: `${peak(ONE)}, ${peak(TWO)}`,
    }),
    figure({
      id: 'ccusage.replay-vs-floor',
      title: `subagent-otel replay --jobs 1 --out against reading and parsing every line, ${size}`,
      unit: 's',
      values: samples[ONE].seconds,
      floorName: 'read + split + JSON.parse each line once, one Node thread, in process',
      floors,
      notes: `${(megabytes / (samples[ONE].seconds.reduce((a, b) => a + b, 0) / samples[ONE].seconds.length)).toFixed(0)} MB/s on average; the replay process includes Node's start and telemetry to files; ${load}`,
    }),
  ],
});
