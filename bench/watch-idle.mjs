/**
 * Benchmark 9, `watch` while nothing happens: a Claude Code history of
 * about 300 MB (scale 1; copies of the workspace's real sessions in
 * `../shared/transcripts/claude-code/real/` with fresh ids,
 * `lib/claude-history.mjs`), watched by the built command with a warm
 * checkpoint, nothing changing. Figures, each against the same figure of an
 * idle Node process with a 2 s timer (the floor of any watcher in Node):
 * the CPU share over 30 s of quiet, following the system's notifications
 * (the default) and with `--poll` (every look lists the folders); the
 * resident memory then; and the CPU a restart from the warm checkpoint
 * spends until it is quiet. Decisions 0094 and 0120.
 *
 * "Settled" is a condition, not a delay: see `quiet`.
 *
 * @module subagent-otel/bench/watch-idle
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeClaudeHistory } from './lib/claude-history.mjs';
import { CLI, ROOT, benchOptions, cpuMsOf, emitResult, figure, mib, progress } from './lib/common.mjs';

const { rounds, scale } = benchOptions({ rounds: 2 });
const MIN_BYTES = Math.round(300 * 1024 * 1024 * scale);
const QUIET_WINDOW_MS = 30_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Current resident set size of a running process, in bytes (`VmRSS`). */
function rssOf(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/**
 * Resolves with the CPU ms the process used once it has settled (at most 10
 * minutes): its CPU time grew by at most 30 ms over the last 3 s, or at a
 * steady rate under half a core (within 20 % of the 3 s before: a watch
 * that lists on every look never gets quieter than its listing).
 */
async function quiet(pid, what) {
  const deadline = Date.now() + 600_000;
  const samples = [];
  for (;;) {
    const cpu = cpuMsOf(pid);
    if (cpu === undefined) throw new Error(`${what}: the process is gone`);
    const now = Date.now();
    samples.push({ at: now, cpu });
    while (samples.length > 0 && samples[0].at < now - 7_000) samples.shift();
    /** The latest sample at least `ago` ms old. */
    const atLeast = (ago) => samples.findLast((s) => s.at <= now - ago);
    const three = atLeast(3_000);
    const six = atLeast(6_000);
    if (three !== undefined) {
      const last = cpu - three.cpu;
      if (last <= 30) return cpu;
      if (six !== undefined) {
        const before = three.cpu - six.cpu;
        if (last < 1_500 && Math.abs(last - before) <= 0.2 * Math.max(last, before)) return cpu;
      }
    }
    if (now > deadline) throw new Error(`${what}: never settled within 10 minutes`);
    await sleep(250);
  }
}

function start(argv) {
  const child = spawn(process.execPath, argv, {
    stdio: ['ignore', 'ignore', 'pipe'],
    cwd: ROOT,
    env: {
      ...process.env,
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
    },
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => {
    stderr += text;
  });
  const exited = new Promise((resolve) => child.once('close', () => resolve(stderr)));
  return { child, exited, stderr: () => stderr };
}

async function stop(run) {
  run.child.kill('SIGTERM');
  const text = await run.exited;
  if (!text.includes('stopped after')) throw new Error(`the watch did not stop cleanly: ${text.slice(-400)}`);
}

/** CPU share (% of one core) and RSS of an idle process over the quiet window, after it became quiet. */
async function idleFigures(run, what) {
  await quiet(run.child.pid, what);
  const before = cpuMsOf(run.child.pid);
  const t = Date.now();
  await sleep(QUIET_WINDOW_MS);
  const cpu = cpuMsOf(run.child.pid) - before;
  return { cpuPercent: (100 * cpu) / (Date.now() - t), rssBytes: rssOf(run.child.pid) };
}

const work = mkdtempSync(join(tmpdir(), 'subagent-otel-bench-watch-'));
const rows = [];
try {
  const history = join(work, 'history');
  const written = writeClaudeHistory(join(ROOT, '..', 'shared', 'transcripts', 'claude-code', 'real'), history, {
    minBytes: MIN_BYTES,
  });
  progress(
    'watch-idle',
    `history: ${(written.bytes / 2 ** 20).toFixed(0)} MiB, ${written.files} files, ${written.sessions} sessions`,
  );
  for (let round = 0; round < rounds; round += 1) {
    const checkpoint = join(work, `checkpoint-${round}.json`);
    const argv = (extra) => [
      CLI,
      'watch',
      ...extra,
      '--checkpoint',
      checkpoint,
      '--out',
      join(work, 'out'),
      join(history, 'projects'),
    ];
    // The first start reads every session once and writes the checkpoint: not measured.
    const first = start(argv([]));
    await quiet(first.child.pid, 'the first start');
    await stop(first);
    // A restart from the warm checkpoint: CPU until quiet, then the quiet window.
    const notified = start(argv([]));
    const restartCpuMs = await quiet(notified.child.pid, 'the restart');
    const notifiedIdle = await idleFigures(notified, 'the watch');
    await stop(notified);
    const polled = start(argv(['--poll']));
    const polledIdle = await idleFigures(polled, 'the watch with --poll');
    await stop(polled);
    const bare = start(['-e', 'setInterval(() => {}, 2000)']);
    const bareStart = await quiet(bare.child.pid, 'an idle Node process');
    const bareIdle = await idleFigures(bare, 'an idle Node process');
    bare.child.kill('SIGTERM');
    await bare.exited;
    rows.push({ restartCpuMs, notifiedIdle, polledIdle, bareIdle, bareStart });
    progress(
      'watch-idle',
      `round ${round + 1}/${rounds}: idle CPU ${notifiedIdle.cpuPercent.toFixed(2)} % (--poll ${polledIdle.cpuPercent.toFixed(2)} %, bare node ${bareIdle.cpuPercent.toFixed(2)} %); ` +
        `RSS ${mib(notifiedIdle.rssBytes).toFixed(0)} MiB (--poll ${mib(polledIdle.rssBytes).toFixed(0)}, bare ${mib(bareIdle.rssBytes).toFixed(0)}); restart ${restartCpuMs.toFixed(0)} ms CPU`,
    );
  }
  const size = `${(written.bytes / 2 ** 20).toFixed(0)} MiB history (${written.files} files)`;
  /** A CPU-share figure of one watch variant against the idle Node process; the ratio column is the difference. */
  const idleCpuFigure = (id, title, pick, target) =>
    figure({
      id,
      title,
      unit: '% of a core',
      values: rows.map((r) => pick(r).cpuPercent),
      floorName: 'an idle Node process with a 2 s timer',
      floors: rows.map((r) => r.bareIdle.cpuPercent),
      ratioOf: (v, f) => v - f,
      notes: 'ratio column: the value minus the floor, in percentage points',
      ...(target !== undefined ? { target } : {}),
    });
  emitResult({
    benchmark: 'watch-idle',
    workload: {
      bytes: written.bytes,
      files: written.files,
      sessions: written.sessions,
      quietWindowMs: QUIET_WINDOW_MS,
    },
    figures: [
      idleCpuFigure('watch.idle-cpu', `watch CPU while nothing changes, ${size}`, (r) => r.notifiedIdle, {
        kind: 'max-value',
        limit: 1,
        text: 'under 1 % of a core (issue 40)',
      }),
      idleCpuFigure('watch.idle-cpu-poll', `watch --poll CPU while nothing changes, ${size}`, (r) => r.polledIdle),
      figure({
        id: 'watch.idle-rss',
        title: `watch RSS while nothing changes, ${size}`,
        unit: 'MiB',
        values: rows.map((r) => mib(r.notifiedIdle.rssBytes)),
        floorName: 'an idle Node process',
        floors: rows.map((r) => mib(r.bareIdle.rssBytes)),
        target: { kind: 'max-value', limit: 64, text: 'under 64 MiB (issue 40)' },
      }),
      figure({
        id: 'watch.restart-cpu',
        title: `watch restart from a warm checkpoint until quiet, ${size}`,
        unit: 'ms CPU',
        values: rows.map((r) => r.restartCpuMs),
        floorName: 'an idle Node process until quiet',
        floors: rows.map((r) => r.bareStart),
        target: { kind: 'max-value', limit: 1000, text: 'under 1 s of CPU (issue 40)' },
      }),
    ],
  });
} finally {
  rmSync(work, { recursive: true, force: true });
}
