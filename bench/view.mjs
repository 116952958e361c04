/**
 * Benchmark of `subagent-otel view` on a large history (not a test): at
 * scale 1, at least 10,000 runs from about 1 GB of Claude Code transcripts,
 * copies of the real public sessions in the workspace's `../shared/transcripts/claude-code/real/`
 * (`lib/claude-history.mjs`) without the one 2.7 MB main session, so that
 * the runs per GB are those of sessions with subagents (about 5 runs per
 * 0.66 MB copy). Two ways in:
 *
 * - OTLP files: the history is replayed once with `subagent-otel replay
 *   --out` (its time is reported, not judged), then `view <dir>` is started;
 * - transcripts: `view <history>` replays the folder in process first.
 *
 * For each, measured from the spawn of `view`: the time to the first
 * table (the URL printed, `/api/summary` ready, then the page's own
 * requests: the HTML, its script and style sheet, `/api/summary` and the
 * first `/api/runs` page, as the page asks for them, gzip accepted), the
 * bytes those responses put on the wire (what the page downloads before it
 * shows the table), the server's RSS then and its peak, and the time of a
 * text search over every run and of opening one run.
 *
 * Usage: `npm run build && node bench/view.mjs [--scale <x>]` (scale 0.1:
 * 1,000 runs, a quick look). Prints one JSON line on stdout, progress on stderr.
 *
 * @module subagent-otel/bench/view
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CLI, ROOT, benchOptions, emitResult, mib, peakRssOf, progress } from './lib/common.mjs';
import { writeClaudeHistory } from './lib/claude-history.mjs';

const { scale } = benchOptions({ rounds: 1 });
const WANTED_RUNS = Math.round(10_000 * scale);
const REAL = join(ROOT, '..', 'shared', 'transcripts', 'claude-code', 'real'); // the workspace's real sessions, outside the project
const BIG_SESSION = '258c7280-ae70-4798-800f-63464d01a85d';

const work = mkdtempSync(join(tmpdir(), 'subagent-otel-bench-view-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

// The sources: the real sessions without the large main session (and without README/LICENSE).
const source = join(work, 'source');
mkdirSync(source);
cpSync(REAL, source, {
  recursive: true,
  filter: (src) => !src.includes(BIG_SESSION) && !/(README\.md|LICENSE)$/.test(src),
});
// claude-history renames the ids it finds in file names: a session file named otherwise (short.jsonl) is
// renamed after its session id first, so that every copy is a session of its own, not the same runs again.
for (const name of readdirSync(source)) {
  if (!name.endsWith('.jsonl') || /^[0-9a-f-]{36}\.jsonl$/.test(name)) continue;
  const id = /"sessionId":"([0-9a-f-]{36})"/.exec(readFileSync(join(source, name), 'utf8'))?.[1];
  if (id !== undefined) renameSync(join(source, name), join(source, `${id}.jsonl`));
}
const perCopy = JSON.parse(
  execFileSync(process.execPath, [CLI, 'replay', '--json', '--out', join(work, 'probe'), source], { encoding: 'utf8' }),
).runs;
const copies = Math.ceil(WANTED_RUNS / perCopy);
const history = join(work, 'claude');
progress('view', `writing ${copies} copies of the sessions (${perCopy} runs each)`);
const written = writeClaudeHistory(source, history, { copies });
progress('view', `${(written.bytes / 1e6).toFixed(0)} MB in ${written.files} files`);

const otlp = join(work, 'otlp');
let started = performance.now();
const replayed = JSON.parse(
  execFileSync(process.execPath, [CLI, 'replay', '--json', '--out', otlp, history], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  }),
);
const replaySeconds = (performance.now() - started) / 1000;
const tracesBytes = statSync(join(otlp, 'traces.jsonl')).size;
progress(
  'view',
  `replayed ${replayed.runs} runs in ${replaySeconds.toFixed(1)} s; traces.jsonl ${(tracesBytes / 1e6).toFixed(0)} MB`,
);

/** GET `path` with gzip accepted. @returns status, wire bytes and the decoded body. */
function get(url, path) {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { headers: { 'accept-encoding': 'gzip' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const wire = Buffer.concat(chunks);
        const body = res.headers['content-encoding'] === 'gzip' ? gunzipSync(wire) : wire;
        resolve({ status: res.statusCode, wireBytes: wire.length, body: body.toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0) * 1024;
}

async function measure(name, target) {
  started = performance.now();
  const child = spawn(process.execPath, [CLI, 'view', target], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr.resume();
  const url = await new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (c) => {
      text += c;
      const m = /(http:\/\/\S+)/.exec(text);
      if (m) resolve(m[1]);
    });
    child.once('exit', () => reject(new Error(`${name}: view exited before printing its URL`)));
  });
  const listenedMs = performance.now() - started;
  for (;;) {
    const summary = JSON.parse((await get(url, '/api/summary')).body);
    if (summary.state === 'ready') break;
    if (summary.state === 'failed') throw new Error(`${name}: ${summary.error}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const readyMs = performance.now() - started;
  let wire = 0;
  for (const path of ['/', '/assets/page.js', '/assets/page.css', '/api/summary'])
    wire += (await get(url, path)).wireBytes;
  const first = await get(url, '/api/runs?sort=time&dir=desc&offset=0&limit=100');
  wire += first.wireBytes;
  const firstTableMs = performance.now() - started;
  const page = JSON.parse(first.body);
  const rssAtTable = rssOf(child.pid);
  let t = performance.now();
  const searched = JSON.parse((await get(url, '/api/runs?q=information&limit=100')).body);
  const searchMs = performance.now() - t;
  t = performance.now();
  const detail = await get(url, `/api/run?id=${encodeURIComponent(page.rows[0].id)}`);
  const openRunMs = performance.now() - t;
  t = performance.now();
  await get(url, '/api/charts');
  const chartsMs = performance.now() - t;
  const peak = peakRssOf(child.pid);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const result = {
    name,
    runs: page.total,
    listenedMs: Math.round(listenedMs),
    readyMs: Math.round(readyMs),
    firstTableMs: Math.round(firstTableMs),
    pageWireBytes: wire,
    rssAtTableMiB: Number(mib(rssAtTable).toFixed(1)),
    peakRssMiB: peak === undefined ? null : Number(mib(peak).toFixed(1)),
    searchMs: Math.round(searchMs),
    searchMatches: searched.total,
    openRunMs: Math.round(openRunMs),
    openRunWireBytes: detail.wireBytes,
    chartsMs: Math.round(chartsMs),
  };
  progress('view', JSON.stringify(result));
  return result;
}

const fromOtlp = await measure('otlp-files', otlp);
const fromTranscripts = await measure('transcripts', history);
emitResult({
  benchmark: 'view',
  scale,
  history: {
    bytes: written.bytes,
    files: written.files,
    copies,
    runs: replayed.runs,
    replaySeconds: Number(replaySeconds.toFixed(1)),
    tracesBytes,
  },
  results: [fromOtlp, fromTranscripts],
});
