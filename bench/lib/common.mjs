/**
 * Shared helpers of the benchmark scripts: command-line options, progress on
 * stderr, statistics (median, min, max, percentiles), paired ratios, child
 * processes that print one JSON result, and peak-RSS reading. Owns no
 * workload (see `workload.mjs`) and measures nothing itself.
 *
 * Every benchmark script prints exactly one JSON line on stdout (its
 * result) and everything else on stderr, so `run.mjs` can run each one in a
 * fresh process and collect the results.
 *
 * @module subagent-otel/bench/lib/common
 */
import { execFileSync, spawn } from 'node:child_process';
import { createReadStream, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** Absolute path of the repository root (the parent of `bench/`). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Absolute path of the built CLI: the bundle `npm run build` writes, the package's `bin`. */
export const CLI = fileURLToPath(new URL('../../dist/cli/subagent-otel.js', import.meta.url));

/** Imports a module of the built package by its path under `dist/`, e.g. `output/assistant-output.js`. */
export function importDist(path) {
  return import(new URL(`../../dist/${path}`, import.meta.url).href);
}

const started = performance.now();

/**
 * Writes one progress line to stderr, prefixed with the seconds since this
 * process started and the script's tag. Never writes to stdout.
 */
export function progress(tag, message) {
  const seconds = ((performance.now() - started) / 1000).toFixed(1).padStart(5);
  process.stderr.write(`[bench ${seconds}s] ${tag}: ${message}\n`);
}

/**
 * Parses the options every benchmark script takes: `--rounds <n>` (default
 * `defaults.rounds`) and `--scale <x>` (a factor on workload sizes, default
 * 1; the figures the targets speak of are taken at 1). Unknown options are
 * an error (strict).
 * @returns `{ rounds, scale }`.
 */
export function benchOptions(defaults = { rounds: 5 }) {
  const { values } = parseArgs({
    options: { rounds: { type: 'string' }, scale: { type: 'string' } },
    strict: true,
  });
  const rounds = values.rounds !== undefined ? Number(values.rounds) : defaults.rounds;
  const scale = values.scale !== undefined ? Number(values.scale) : 1;
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds takes a whole number >= 1, got ${values.rounds}`);
  if (!(scale > 0)) throw new Error(`--scale takes a positive number, got ${values.scale}`);
  return { rounds, scale };
}

/**
 * Summarizes samples.
 * @returns `{ median, min, max, samples }` (`samples` in measurement order);
 *   the median of an even count is the mean of the middle two. Throws on an
 *   empty list (a harness bug).
 */
export function summarize(samples) {
  if (samples.length === 0) throw new Error('summarize: no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], samples: [...samples] };
}

/**
 * Nearest-rank percentile of `sorted` (ascending), `p` in (0, 100].
 * @returns the smallest sample with at least p% of the samples at or below it.
 */
export function percentile(sorted, p) {
  if (sorted.length === 0) throw new Error('percentile: no samples');
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/**
 * One figure next to its floor. `value` and `floor` are per-round samples
 * taken in the same round (interleaved), so each round gives one ratio
 * `value / floor`; the ratio reported is the summary of those paired ratios,
 * which cancels most of the machine's background noise.
 *
 * @param spec `{ id, title, unit, values, floorName, floors, target?, notes? }`
 *   where `target` is `{ kind: 'min-ratio' | 'max-ratio' | 'max-value' | 'at-most-value', limit, text }`
 *   (judged on the median ratio, or on the median value for `max-value`
 *   (below the limit) and `at-most-value` (the limit itself included));
 *   `ratioOf(value, floor)` replaces the default `value / floor`.
 * @returns the JSON record `results.json` holds for the figure, with `pass`
 *   (`true`/`false`, or `null` when the figure has no target).
 */
export function figure({ id, title, unit, values, floorName, floors, ratioOf, target, notes, extra }) {
  if (values.length !== floors.length) throw new Error(`${id}: ${values.length} values but ${floors.length} floors`);
  const ratios = values.map((v, i) => (ratioOf ?? ((a, b) => a / b))(v, floors[i]));
  const value = summarize(values);
  const floor = summarize(floors);
  const ratio = summarize(ratios);
  let pass = null;
  if (target !== undefined) {
    if (target.kind === 'min-ratio') pass = ratio.median >= target.limit;
    else if (target.kind === 'max-ratio') pass = ratio.median <= target.limit;
    else if (target.kind === 'max-value') pass = value.median < target.limit;
    else if (target.kind === 'at-most-value') pass = value.median <= target.limit;
    else throw new Error(`${id}: unknown target kind ${target.kind}`);
  }
  return {
    id,
    title,
    unit,
    value,
    floor: { name: floorName, unit, ...floor },
    ratio,
    ...(target !== undefined ? { target } : {}),
    pass,
    ...(notes !== undefined ? { notes } : {}),
    ...(extra !== undefined ? { extra } : {}),
  };
}

/**
 * Prints a benchmark script's result as the one JSON line on stdout.
 * @param result `{ benchmark, figures: [...], ... }`.
 */
export function emitResult(result) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/**
 * Runs a benchmark script in a fresh Node process and reads its JSON result.
 * Its stderr (progress) is passed through.
 *
 * @returns a promise of the parsed result; it rejects when the script exits
 *   non-zero or prints no JSON line.
 */
export function runScript(script, args = [], nodeArgs = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
      cwd: ROOT,
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text) => {
      out += text;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) return reject(new Error(`${script} exited with ${code ?? signal}`));
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line));
      } catch {
        // A script that printed something other than its JSON result is a harness bug; say so with what came.
        reject(new Error(`${script} printed no JSON result: ${line.slice(0, 200)}`));
      }
    });
  });
}

/**
 * Peak resident set size of a running process, from `/proc/<pid>/status`
 * (`VmHWM`), in bytes; `undefined` when it cannot be read (not Linux, or the
 * process is gone).
 */
export function peakRssOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    // ENOENT/ESRCH: the process already exited; the caller decides what a missing figure means.
    return undefined;
  }
}

let clockTicks;
/**
 * CPU time a running process has used so far, in ms, split into user and
 * system (kernel) time, from `/proc/<pid>/stat`; `undefined` when it cannot
 * be read. Resolution is one clock tick (usually 10 ms).
 */
export function cpuTimesOf(pid) {
  try {
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command name: state is field 3, utime field 14, stime field 15 (1-based, of the whole line).
    return { userMs: (Number(fields[11]) * 1000) / clockTicks, systemMs: (Number(fields[12]) * 1000) / clockTicks };
  } catch {
    // ENOENT: the process is gone (or this is not Linux); the figure is then missing, not wrong.
    return undefined;
  }
}

/** CPU time (user + system) a running process has used so far, in ms (see `cpuTimesOf`); `undefined` when it cannot be read. */
export function cpuMsOf(pid) {
  const times = cpuTimesOf(pid);
  return times === undefined ? undefined : times.userMs + times.systemMs;
}

/** Bytes as MiB with one decimal. */
export function mib(bytes) {
  return bytes / (1024 * 1024);
}

/** Yields to the event loop once (lets timers and I/O callbacks run). */
export function turnLoop() {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The parse floor of the proxy benchmarks: split `chunks` (Buffers, as a pipe
 * delivers them) into lines and `JSON.parse` each once.
 * @returns how many lines parsed to something other than `null` (a checksum, so nothing is optimized away).
 */
export function splitAndParse(chunks) {
  let carry;
  let n = 0;
  for (const chunk of chunks) {
    let start = 0;
    let newline = chunk.indexOf(0x0a);
    if (carry !== undefined && newline !== -1) {
      const line = Buffer.concat([carry, chunk.subarray(0, newline)]);
      n += JSON.parse(line.toString('utf8')) === null ? 0 : 1;
      carry = undefined;
      start = newline + 1;
      newline = chunk.indexOf(0x0a, start);
    }
    while (newline !== -1) {
      n += JSON.parse(chunk.toString('utf8', start, newline)) === null ? 0 : 1;
      start = newline + 1;
      newline = chunk.indexOf(0x0a, start);
    }
    if (start < chunk.length)
      carry = carry === undefined ? chunk.subarray(start) : Buffer.concat([carry, chunk.subarray(start)]);
  }
  return n;
}

/** Every file under `dir`, recursively. */
export function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/**
 * The floor of reading transcripts in one Node thread: every file read
 * (64 KiB chunks), split at newlines and each line `JSON.parse`d once.
 * @returns the seconds it took; throws when no line was read.
 */
export async function readAndParseSeconds(files) {
  const start = performance.now();
  let lines = 0;
  for (const file of files) {
    let rest = '';
    for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 64 * 1024 })) {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) if (line !== '') lines += JSON.parse(line) === null ? 0 : 1;
    }
    if (rest !== '') lines += JSON.parse(rest) === null ? 0 : 1;
  }
  if (lines === 0) throw new Error('floor: no lines');
  return (performance.now() - start) / 1000;
}
