/**
 * A large Claude Code history for the transcript benchmark, made from the
 * real sessions in the workspace's `../shared/transcripts/claude-code/real/`: copies
 * of each session directory (the session file, its `subagents/` files and
 * sidecars) under `projects/-bench-<k>/`, each copy with fresh session and
 * agent ids (the ids replaced in file names and contents alike), until the
 * history holds at least the bytes asked for. The copies are real bytes of a
 * real agent, only renamed: the reader does on them what it does on a user's
 * `~/.claude/projects`.
 *
 * @module subagent-otel/bench/lib/claude-history
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const AGENT_FILE = /^agent-(a[0-9a-f]+)\.(jsonl|meta\.json)$/;

/** Every file under `dir`, as paths relative to it. */
function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path).map((p) => join(name, p)) : [name];
  });
}

/** A deterministic id of the same shape as `id` for copy `k`. */
function renamed(id, k) {
  const hex = createHash('sha256').update(`${k}:${id}`).digest('hex');
  if (id.includes('-'))
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  return `a${hex.slice(0, id.length - 1)}`;
}

const TIMESTAMP = /"timestamp":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)"/g;

/**
 * Writes copies of the sessions found in `sourceDir` (any layout of Claude
 * Code files: `<uuid>.jsonl`, `<uuid>/subagents/...`) into `targetDir`:
 * `copies` of them, or as many as make at least `minBytes`. With
 * `latestTime` (epoch ms), every `"timestamp"` is moved by the same amount
 * so that the latest one of the sources lands on it (a stack test's Jaeger
 * searches recent traces only).
 * @param {string} sourceDir
 * @param {string} targetDir
 * @param {{ minBytes?: number, copies?: number, latestTime?: number }} options
 * @returns `{ bytes, files, copies, sessions }` of what was written.
 */
export function writeClaudeHistory(sourceDir, targetDir, options) {
  const minBytes = options.minBytes ?? 0;
  const wanted = options.copies ?? Number.POSITIVE_INFINITY;
  const sources = filesUnder(sourceDir).filter((p) => p.endsWith('.jsonl') || p.endsWith('.meta.json'));
  if (sources.length === 0) throw new Error(`no Claude Code files under ${sourceDir}`);
  const texts = sources.map((p) => ({ path: p, text: readFileSync(join(sourceDir, p), 'utf8') }));
  const ids = new Set();
  for (const { path } of texts) {
    for (const m of path.matchAll(UUID)) ids.add(m[0]);
    const agent = AGENT_FILE.exec(path.split('/').pop() ?? '');
    if (agent !== null) ids.add(agent[1]);
  }
  const pattern = new RegExp([...ids].sort((a, b) => b.length - a.length).join('|'), 'g');
  let shift = 0;
  if (options.latestTime !== undefined) {
    let latest = 0;
    for (const { text } of texts)
      for (const m of text.matchAll(TIMESTAMP)) latest = Math.max(latest, Date.parse(m[1] ?? ''));
    shift = options.latestTime - latest;
  }
  const moved = (text) =>
    shift === 0
      ? text
      : text.replace(TIMESTAMP, (_all, iso) => `"timestamp":"${new Date(Date.parse(iso) + shift).toISOString()}"`);
  let bytes = 0;
  let files = 0;
  let copies = 0;
  while (copies < wanted && (bytes < minBytes || options.copies !== undefined)) {
    const project = join(targetDir, 'projects', `-bench-${copies}`);
    const names = new Map([...ids].map((id) => [id, renamed(id, copies)]));
    const swap = (s) => s.replace(pattern, (id) => names.get(id) ?? id);
    for (const { path, text } of texts) {
      const target = join(project, swap(path));
      mkdirSync(join(target, '..'), { recursive: true });
      const body = moved(swap(text));
      writeFileSync(target, body);
      bytes += Buffer.byteLength(body);
      files += 1;
    }
    copies += 1;
  }
  return {
    bytes,
    files,
    copies,
    sessions:
      texts.filter((t) => /(^|\/)[0-9a-f]{8}-[0-9a-f-]{27}\.jsonl$/.test(t.path) && !t.path.includes('/subagents/'))
        .length * copies,
  };
}
