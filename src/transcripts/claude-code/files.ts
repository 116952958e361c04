/**
 * Claude Code's transcripts as a replay format: which files are Claude
 * Code's (by their first record and their place in `~/.claude/projects`),
 * how they group into sessions (a session file, its subagents' files in any
 * of the three layouts, their `agent-<id>.meta.json` sidecars), and reading
 * one session, file by file with the one line reader, into runs
 * (`transcripts/claude-code/runs`). Owns the files and their order, the
 * problems met in them (file and line), progress, backpressure between runs
 * and, when watching, which finished runs may be reported yet.
 *
 * Files that are Claude Code's but hold no run are classified `other` with
 * what they are: the auto-compaction summariser (`agent-acompact-*`), `/btw`
 * side questions (`agent-aside_question-*`), 2.0.x warm-up sidechains, a
 * workflow's `journal.jsonl`, the prompt history (`~/.claude/history.jsonl`)
 * and the session index (`sessions-index.json`).
 *
 * @module subagent-otel/transcripts/claude-code/files
 */
import { Buffer } from 'node:buffer';
import { basename, dirname, resolve, sep } from 'node:path';
import { fileChunks } from '../../wire/file-chunks.js';
import { decodeUtf8Line } from '../../wire/ndjson.js';
import {
  isClaudeChainLine,
  isKnownClaudeRecordType,
  isClaudeCodeLine,
  isClaudeWireError,
  parseClaudeAgentMeta,
  parseClaudeCodeLine,
  type ClaudeCodeRecord,
} from './records.js';
import { ClaudeCodeSessionReader, CLAUDE_CODE, type ClaudeRunOutcome } from './runs.js';
import type { RunRecord, RunStart, RunWorkspace } from '../../observe/run-record.js';
import { isQuietFile, MAX_PROBLEMS_PER_FILE, readRecords } from '../record-loop.js';
import type { WireError } from '../../wire/wire-error.js';
import type {
  TranscriptFile,
  TranscriptFileInfo,
  TranscriptFileResult,
  TranscriptFormat,
  TranscriptHead,
  TranscriptReadContext,
  TranscriptSession,
} from '../format.js';
import { isJsonObject, parseJsonObject } from '../../wire/json-values.js';

/** Defective lines reported per file before the rest of it is skipped (`too-many-problems`), as for session logs. */
export const MAX_CLAUDE_PROBLEMS_PER_FILE = MAX_PROBLEMS_PER_FILE;
/** Largest sidecar read (`agent-<id>.meta.json` holds a few fields). */
const MAX_SIDECAR_BYTES = 256 * 1024;

/** What the summary prints for Claude Code files that hold no run. */
export const CLAUDE_CODE_OTHER_FILES = {
  compaction: 'Claude Code auto-compaction summariser (agent-acompact): not a Task subagent, no run',
  sideQuestion: 'Claude Code /btw side question (aside_question): not a Task subagent, no run',
  warmup: 'Claude Code warm-up sidechain (2.0.x "Warmup"): not a Task subagent, no run',
  journal: 'Claude Code workflow journal (journal.jsonl): no run',
  history: 'Claude Code prompt history (history.jsonl): no run',
  sessionIndex: 'Claude Code session index (sessions-index.json): no run',
  sidecar: 'Claude Code subagent sidecar (agent type and delegating call), read with its subagent',
} as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The Claude Code transcript format. */
export const claudeCodeFormat: TranscriptFormat = {
  name: CLAUDE_CODE,
  classify: classifyClaudeCode,
  group: groupClaudeCode,
  read: readClaudeCodeSession,
};

/**
 * What a file is for Claude Code.
 * @returns `session` for a session file (`facts.role` `main`) or a
 *   subagent's file (`child`, with its `agentId`), `sidecar` for an
 *   `agent-<id>.meta.json`, `other` for the files that hold no run (see the
 *   module header), `undefined` for anything else. Never throws.
 */
export function classifyClaudeCode(head: TranscriptHead): TranscriptFileInfo | undefined {
  const name = basename(head.path);
  const first = head.firstLine;
  if (name === 'history.jsonl' && isJsonObject(first) && typeof first['display'] === 'string')
    return other(CLAUDE_CODE_OTHER_FILES.history);
  if (name === 'sessions-index.json' && /"(?:firstPrompt|messageCount|sessionId|entries)"\s*:/.test(head.prefix))
    return other(CLAUDE_CODE_OTHER_FILES.sessionIndex);
  const meta = /^agent-(.+)\.meta\.json$/.exec(name);
  if (meta !== null) {
    const value = isJsonObject(first) ? first : parseJsonObject(head.prefix);
    if (value === undefined || !['agentType', 'toolUseId', 'description', 'spawnDepth'].some((k) => k in value))
      return undefined;
    return {
      format: CLAUDE_CODE,
      kind: 'sidecar',
      what: CLAUDE_CODE_OTHER_FILES.sidecar,
      facts: { role: 'meta', agentId: meta[1] },
    };
  }
  if (!name.endsWith('.jsonl')) return undefined;
  const line = lineFacts(head);
  if (line === undefined) {
    // A workflow's journal is not a transcript line; it is known by its name and place.
    if (name === 'journal.jsonl' && head.path.split(sep).includes('workflows') && isJsonObject(first))
      return other(CLAUDE_CODE_OTHER_FILES.journal);
    return undefined;
  }
  const fileAgent = /^agent-(.+)\.jsonl$/.exec(name)?.[1];
  // A session file (inline layout included: its line 1 may be a sidechain's) is any Claude Code file not named `agent-*.jsonl`.
  if (fileAgent === undefined)
    return { format: CLAUDE_CODE, kind: 'session', facts: { role: 'main', sessionId: line.sessionId } };
  const agentId = line.agentId ?? fileAgent;
  if (agentId.startsWith('acompact-')) return other(CLAUDE_CODE_OTHER_FILES.compaction);
  if (agentId.startsWith('aside_question-')) return other(CLAUDE_CODE_OTHER_FILES.sideQuestion);
  if (line.isWarmup) return other(CLAUDE_CODE_OTHER_FILES.warmup);
  return { format: CLAUDE_CODE, kind: 'session', facts: { role: 'child', agentId, sessionId: line.sessionId } };
}

interface LineFacts {
  readonly sessionId?: string | undefined;
  readonly agentId?: string | undefined;
  readonly isWarmup: boolean;
}

/**
 * Facts of the first record that identifies a Claude Code file: the first
 * chain line among the file's first records (its envelope says the session
 * and agent), else the first other Claude Code record (`queue-operation`,
 * `permission-mode`, `file-history-snapshot`, ...), whatever came before it
 * (record types this reader does not know are passed over, never fatal:
 * decision 0099). A line 1 longer than the sniff window is judged by its
 * beginning.
 */
function lineFacts(head: TranscriptHead): LineFacts | undefined {
  const records = head.records ?? (head.firstLine !== undefined ? [head.firstLine] : []);
  let fallback: LineFacts | undefined;
  for (const record of records) {
    if (!isClaudeCodeLine(record)) continue;
    const r = record as Record<string, unknown>;
    const sessionId = typeof r['sessionId'] === 'string' ? r['sessionId'] : undefined;
    if (!isClaudeChainLine(record)) {
      fallback ??= { sessionId, agentId: undefined, isWarmup: false };
      continue;
    }
    const message = r['message'];
    const content = isJsonObject(message) ? message['content'] : undefined;
    const text =
      typeof content === 'string'
        ? content
        : Array.isArray(content) && content.length === 1 && isJsonObject(content[0])
          ? content[0]['text']
          : undefined;
    return {
      sessionId,
      agentId: typeof r['agentId'] === 'string' ? r['agentId'] : undefined,
      isWarmup: r['type'] === 'user' && typeof text === 'string' && text.trim() === 'Warmup',
    };
  }
  if (fallback !== undefined || records.length > 0) return fallback;
  const prefix = head.prefix;
  // The parsed records answer whenever line 1 ends within the head. Only a line 1 the head cuts (longer than
  // the sniff window: a first prompt with a large paste or image) or the file ends inside cannot be parsed;
  // it is judged by the envelope it begins with. A chain line starts with `parentUuid`, and its envelope
  // (`sessionId`, `agentId`) comes before `message` in every version seen, so a cut line 1 still shows them.
  if (prefix.includes('\n') || !/^\s*\{\s*"parentUuid"\s*:/.test(prefix)) return undefined;
  const sessionId = /"sessionId"\s*:\s*"([^"]+)"/.exec(prefix)?.[1];
  if (sessionId === undefined) return undefined;
  return { sessionId, agentId: /"agentId"\s*:\s*"([^"]+)"/.exec(prefix)?.[1], isWarmup: false };
}

/** Where a file sits: its session's grouping key and, under `subagents/workflows/<run>/`, the workflow run. */
function placeOf(file: TranscriptFile): { key: string; sessionName: string; workflow?: string } {
  const path = resolve(file.path);
  const role = file.info.facts['role'];
  const parts = path.split(sep);
  const at = parts.lastIndexOf('subagents');
  if (role !== 'main' && at >= 2) {
    const sessionName = parts[at - 1] ?? '';
    const workflow = parts[at + 1] === 'workflows' ? parts[at + 2] : undefined;
    return {
      key: `${parts.slice(0, at - 1).join(sep)}\u0000${sessionName}`,
      sessionName,
      ...(workflow !== undefined ? { workflow } : {}),
    };
  }
  if (role === 'main') {
    const sessionName = basename(path).replace(/\.jsonl$/, '');
    return { key: `${dirname(path)}\u0000${sessionName}`, sessionName };
  }
  // The sibling layout (2.0.28 to 2.1.1): `agent-<id>.jsonl` next to `<session>.jsonl`, named by its lines' session id.
  const sessionName = file.info.facts['sessionId'] ?? `agent-${file.info.facts['agentId'] ?? ''}`;
  return { key: `${dirname(path)}\u0000${sessionName}`, sessionName };
}

/**
 * Groups Claude Code files into sessions: a session file with the children
 * under `<session>/subagents/` (workflow agents included), the sibling
 * `agent-<id>.jsonl` files whose lines name it, and their sidecars. Children
 * whose session file is absent form a session of their own. Never throws.
 */
export function groupClaudeCode(files: readonly TranscriptFile[]): TranscriptSession[] {
  const groups = new Map<
    string,
    { name: string; mains: TranscriptFile[]; metas: TranscriptFile[]; children: TranscriptFile[] }
  >();
  const siblingMetas: TranscriptFile[] = [];
  for (const file of files) {
    const role = file.info.facts['role'];
    if (role === 'meta' && resolve(file.path).split(sep).lastIndexOf('subagents') < 2) {
      siblingMetas.push(file);
      continue;
    }
    const place = placeOf(file);
    let group = groups.get(place.key);
    if (group === undefined) {
      group = { name: place.sessionName, mains: [], metas: [], children: [] };
      groups.set(place.key, group);
    }
    if (role === 'main') group.mains.push(file);
    else if (role === 'meta') group.metas.push(file);
    else group.children.push(file);
  }
  for (const meta of siblingMetas) {
    // A sidecar beside a sibling-layout child: with the child of the same agent in the same directory.
    const dir = dirname(resolve(meta.path));
    const agentId = meta.info.facts['agentId'];
    const group = [...groups.values()].find((g) =>
      g.children.some((c) => dirname(resolve(c.path)) === dir && c.info.facts['agentId'] === agentId),
    );
    if (group !== undefined) group.metas.push(meta);
    else
      groups.set(`${dir}\u0000meta-${agentId ?? ''}`, {
        name: `agent-${agentId ?? ''}`,
        mains: [],
        metas: [meta],
        children: [],
      });
  }
  const sessions: TranscriptSession[] = [];
  for (const group of groups.values()) {
    const byPath = (a: TranscriptFile, b: TranscriptFile): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
    const [main, ...extra] = group.mains;
    const files = [...(main !== undefined ? [main] : []), ...group.metas.sort(byPath), ...group.children.sort(byPath)];
    sessions.push({ format: CLAUDE_CODE, key: `${CLAUDE_CODE}:${group.name}`, files });
    // Two session files can share a name only through links; each is then a session of its own.
    for (const file of extra)
      sessions.push({ format: CLAUDE_CODE, key: `${CLAUDE_CODE}:${group.name}`, files: [file] });
  }
  return sessions;
}

/** Per-file tallies while reading. */
interface FileTally {
  records: number;
  runs: number;
  isSkipped: boolean;
  /** Records of types this reader does not know, by type: passed over (decision 0099). */
  unknown?: Map<string, number>;
  /** The first `cwd` and `gitBranch` its lines carry (decision 0124). */
  workspace?: RunWorkspace;
}

/**
 * Reads one session: the session file, the sidecars, then each subagent's
 * file (those whose delegating call is known first, so a subagent's
 * subagents are linked), and reports its runs, children before parents,
 * pausing between runs. With `context.live`, reports only runs whose end is
 * recorded or whose file has been quiet for `live.idleMs`, and none reported
 * before. Never rejects.
 */
export async function readClaudeCodeSession(
  session: TranscriptSession,
  context: TranscriptReadContext,
): Promise<readonly TranscriptFileResult[]> {
  const tallies = new Map<string, FileTally>(
    session.files.map((f) => [f.path, { records: 0, runs: 0, isSkipped: false }]),
  );
  const main = session.files.find((f) => f.info.facts['role'] === 'main');
  const metas = session.files.filter((f) => f.info.facts['role'] === 'meta');
  const children = session.files.filter((f) => f.info.facts['role'] === 'child');
  const childIds = new Set(children.map((f) => f.info.facts['agentId'] ?? ''));
  const mainName = main !== undefined ? basename(main.path).replace(/\.jsonl$/, '') : undefined;
  const named = mainName !== undefined && UUID.test(mainName) ? mainName : undefined;
  const lineSession =
    main?.info.facts['sessionId'] ??
    children.find((f) => f.info.facts['sessionId'] !== undefined)?.info.facts['sessionId'];
  const sessionId = named ?? lineSession ?? mainName ?? session.key.slice(CLAUDE_CODE.length + 1);
  const reader = new ClaudeCodeSessionReader({
    sessionId,
    isSessionIdGuess: named === undefined && lineSession === undefined,
    hasMain: main !== undefined,
    childFiles: childIds,
    ...(context.agentName !== undefined ? { agentName: context.agentName } : {}),
    fallbackTime: Math.min(...session.files.map((f) => f.mtimeMs).filter((t) => t > 0), Date.now()),
  });

  for (const meta of metas) {
    const tally = tallies.get(meta.path);
    const text = await readSmallFile(meta.path, context);
    const agentId = meta.info.facts['agentId'];
    if (text === undefined) {
      context.onProblem({
        file: meta.path,
        line: 0,
        code: 'unreadable',
        scope: 'file',
        message: 'cannot read the sidecar',
      });
      if (tally !== undefined) tally.isSkipped = true;
      continue;
    }
    const parsed = parseClaudeAgentMeta(text);
    if (isClaudeWireError(parsed)) {
      context.onProblem({ file: meta.path, line: 1, code: parsed.code, scope: 'file', message: parsed.message });
      if (tally !== undefined) tally.isSkipped = true;
      continue;
    }
    if (agentId !== undefined) reader.addMeta(agentId, parsed);
    if (tally !== undefined) tally.records = 1;
  }

  if (main !== undefined) await readFile(main, context, tallies, (record) => reader.pushMain(record));
  const pending = [...children];
  while (pending.length > 0) {
    // Children whose delegating call is already known first: a subagent's own subagents are then linked to it.
    const index = Math.max(
      0,
      pending.findIndex((f) => reader.isLinked(f.info.facts['agentId'] ?? '')),
    );
    const [file] = pending.splice(index, 1);
    if (file === undefined) break;
    const place = placeOf(file);
    const handle = reader.startChild(file.info.facts['agentId'] ?? '', file.path, place.workflow);
    await readFile(file, context, tallies, (record) => reader.pushChild(handle, record));
    reader.finishChild(handle);
  }

  const outcomes = reader.finish();
  for (const outcome of outcomes) {
    if (!mayReport(outcome, session, context)) continue;
    const path = outcome.fileKey === 'main' ? main?.path : outcome.fileKey;
    const tally = path !== undefined ? tallies.get(path) : undefined;
    // Where the run worked: its own file's lines, else the session's.
    const workspace = tally?.workspace ?? (main !== undefined ? tallies.get(main.path)?.workspace : undefined);
    const record = workspace !== undefined ? { ...outcome.record, workspace } : outcome.record;
    context.listener.onRunStart(startOf(record));
    context.listener.onRunEnd(record);
    if (tally !== undefined) tally.runs += 1;
    await context.pause();
  }
  return session.files.map((f) => {
    const tally = tallies.get(f.path) ?? { records: 0, runs: 0, isSkipped: false };
    const unknown = tally.unknown !== undefined ? { unknownRecords: Object.fromEntries(tally.unknown) } : {};
    return { path: f.path, records: tally.records, runs: tally.runs, isSkipped: tally.isSkipped, ...unknown };
  });
}

/** Whether a finished run may be reported now: always in a replay; in watch, once its end is recorded or its file is quiet, and never twice with the same end. */
function mayReport(outcome: ClaudeRunOutcome, session: TranscriptSession, context: TranscriptReadContext): boolean {
  const live = context.live;
  if (live === undefined) return true;
  if (live.isReported(outcome.record.runId, outcome.record.endTime)) return false;
  if (outcome.isEnded) return true;
  const path =
    outcome.fileKey === 'main' ? session.files.find((f) => f.info.facts['role'] === 'main')?.path : outcome.fileKey;
  const file = session.files.find((f) => f.path === path);
  return file !== undefined && isQuiet(file, context);
}

const isQuiet = isQuietFile;

/** Reads one JSONL file's records into `push` with the one record loop, counting record types this reader does not know. */
async function readFile(
  file: TranscriptFile,
  context: TranscriptReadContext,
  tallies: Map<string, FileTally>,
  push: (record: ClaudeCodeRecord) => void,
): Promise<void> {
  const tally = tallies.get(file.path) ?? { records: 0, runs: 0, isSkipped: false };
  tallies.set(file.path, tally);
  const result = await readRecords<ClaudeCodeRecord, WireError>(file, context, {
    parse: parseClaudeCodeLine,
    isDefect: isClaudeWireError,
    onRecord: (record) => {
      if (tally.workspace === undefined && 'cwd' in record && typeof record.cwd === 'string') {
        tally.workspace = {
          cwd: record.cwd,
          ...(typeof record.gitBranch === 'string' && record.gitBranch !== '' ? { branch: record.gitBranch } : {}),
        };
      }
      if (record.kind === 'other' && !isKnownClaudeRecordType(record.type)) {
        tally.unknown ??= new Map();
        tally.unknown.set(record.type, (tally.unknown.get(record.type) ?? 0) + 1);
      }
      push(record);
      return 'continue';
    },
  });
  tally.records += result.records;
  if (result.isSkipped) tally.isSkipped = true;
}

/** A small JSON file's text (a sidecar), or `undefined` when unreadable or not UTF-8. At most {@link MAX_SIDECAR_BYTES}. */
async function readSmallFile(path: string, context: TranscriptReadContext): Promise<string | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of fileChunks(path, (bytes) => context.onBytes(path, bytes))) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_SIDECAR_BYTES) break;
    }
  } catch {
    // ENOENT/EACCES/EIO: removed or unreadable since the walk; reported by the caller.
    return undefined;
  }
  const decoded = decodeUtf8Line(Buffer.concat(chunks).subarray(0, MAX_SIDECAR_BYTES));
  return decoded.ok ? decoded.text : undefined;
}

/** The identity part of a record, as its run's start. */
function startOf(record: RunRecord): RunStart {
  return {
    runId: record.runId,
    source: record.source,
    agentName: record.agentName,
    startTime: record.startTime,
    ...(record.sessionId !== undefined ? { sessionId: record.sessionId } : {}),
    ...(record.parentSessionId !== undefined ? { parentSessionId: record.parentSessionId } : {}),
    ...(record.parentRunId !== undefined ? { parentRunId: record.parentRunId } : {}),
    ...(record.parentToolCallId !== undefined ? { parentToolCallId: record.parentToolCallId } : {}),
    ...(record.traceKey !== undefined ? { traceKey: record.traceKey } : {}),
    ...(record.provider !== undefined ? { provider: record.provider } : {}),
    ...(record.model !== undefined ? { model: record.model } : {}),
    ...(record.prompt !== undefined ? { prompt: record.prompt } : {}),
  };
}

function other(what: string): TranscriptFileInfo {
  return { format: CLAUDE_CODE, kind: 'other', what, facts: {} };
}
