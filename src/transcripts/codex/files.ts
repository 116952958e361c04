/**
 * Codex rollouts in a replay: which files are Codex's
 * (`${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-*.jsonl` and
 * `archived_sessions/`, told by their first record, a `session_meta`), how
 * they form sessions (a root thread and every thread spawned under it,
 * linked by `session_meta.payload.source.subagent.thread_spawn.parent_thread_id`),
 * and reading a session's files, parents before children, into runs:
 * children reported before their parent, each run's start right before
 * its end, `pause()` between runs.
 *
 * Owns the file side: line 1 facts, grouping, the byte reading (the one
 * reader, `transcripts/record-loop`), problems with file and line, and `live` (which runs
 * may be reported yet). What the records mean is
 * `transcripts/codex/runs.ts`'s; the line schemas are
 * `transcripts/codex/records.ts`'s. Rules and sources: docs/TRANSCRIPTS.md, "Codex".
 *
 * @module subagent-otel/transcripts/codex/files
 */
import type { RunRecord, RunStart, RunWorkspace } from '../../observe/run-record.js';
import {
  CODEX_AGENT_NAME,
  CODEX_SUBAGENT_NAME,
  CodexThreadReader,
  codexRunId,
  findCodexLink,
  type CodexLinkBook,
} from './runs.js';
import {
  isCodexWireError,
  parseCodexLine,
  parseCodexSource,
  type CodexRecord,
  type CodexSessionMeta,
} from './records.js';
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

/** Defective lines reported per file before the rest of it is left unread (`too-many-problems`). */
export const MAX_CODEX_PROBLEMS_PER_FILE = MAX_PROBLEMS_PER_FILE;

/** What Codex's internal helper threads are (`SubAgentSource` other than `thread_spawn`), as the summary names them. */
const INTERNAL_THREADS: Readonly<Record<string, string>> = {
  review:
    'a Codex review thread (internal: started by /review, its findings reach the parent as exited_review_mode, not through a tool call)',
  compact: 'a Codex compaction thread (internal: summarises history for the parent)',
  memory_consolidation: 'a Codex memory consolidation thread (internal: writes memories, never delegated work)',
};

/** The Codex format. */
export const codexFormat: TranscriptFormat = {
  name: 'codex',
  classify: classifyCodex,
  group: groupCodex,
  read: readCodexSession,
};

/** A string field of `value`, when it is a non-empty string. */
function text(value: unknown, key: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'string' && field !== '' ? field : undefined;
}

/**
 * Line 1 of a Codex rollout as a `session_meta` payload: from the parsed
 * line, or, when line 1 is longer than the sniffed prefix (its
 * `base_instructions` can be tens of KB), from the fields serde writes
 * before them at the start of the prefix.
 */
function headMeta(head: TranscriptHead): Record<string, unknown> | undefined {
  const line = head.firstLine;
  if (line !== undefined) {
    if (text(line, 'type') !== 'session_meta') return undefined;
    const payload = (line as Record<string, unknown>)['payload'];
    return text(payload, 'id') !== undefined ? (payload as Record<string, unknown>) : undefined;
  }
  // Line 1 cut by the head (or the file ends inside it) cannot be parsed: only then the fields serde writes
  // before `base_instructions` are read from its beginning.
  if (head.prefix.includes('\n')) return undefined;
  const start = head.prefix.slice(0, 4096);
  if (!/^\{"timestamp":"[^"]*",(?:"ordinal":\d+,)?"type":"session_meta","payload":\{"id":"/.test(start))
    return undefined;
  const before = head.prefix.split('"base_instructions"')[0] ?? '';
  const field = (key: string): string | undefined => new RegExp(`"${key}":"([^"\\\\]+)"`).exec(before)?.[1];
  const id = field('id');
  if (id === undefined) return undefined;
  const parent = field('parent_thread_id');
  const spawn = before.includes('"thread_spawn"') && parent !== undefined;
  const depth = /"depth":(\d+)/.exec(before)?.[1];
  const source = spawn
    ? {
        subagent: {
          thread_spawn: {
            parent_thread_id: parent,
            ...(depth !== undefined ? { depth: Number(depth) } : {}),
            agent_role: field('agent_role'),
            agent_nickname: field('agent_nickname'),
            agent_path: field('agent_path'),
          },
        },
      }
    : (internalSource(before) ?? /"source":"([a-z_]+)"/.exec(before)?.[1]);
  return { id, source, session_id: field('session_id'), forked_from_id: field('forked_from_id') };
}

/** An internal helper's source (`{"subagent": "review"}`, `{"subagent": {"other": name}}`) in a line 1 prefix. */
function internalSource(before: string): unknown {
  const named = /"source":\{"subagent":"([a-z_]+)"/.exec(before)?.[1];
  if (named !== undefined) return { subagent: named };
  const other = /"source":\{"subagent":\{"other":"([^"\\]+)"/.exec(before)?.[1];
  return other !== undefined ? { subagent: { other } } : undefined;
}

/**
 * Whether `head` is a Codex rollout, and what it is: `session` for a
 * client's thread or a `spawn_agent` child (the grouping facts from line 1:
 * thread, parent, role), `other` for Codex's internal helper threads
 * (review, compaction, memory consolidation, `other` sources such as the
 * auto-review guardian), which hold no delegated run.
 *
 * @returns `undefined` when line 1 is not a `session_meta` record with an
 *   id. Never throws.
 */
export function classifyCodex(head: TranscriptHead): TranscriptFileInfo | undefined {
  const meta = headMeta(head);
  const threadId = text(meta, 'id');
  if (meta === undefined || threadId === undefined) return undefined;
  const source = parseCodexSource(meta['source']);
  if (source.kind === 'internal-subagent') {
    const what =
      INTERNAL_THREADS[source.name] ??
      `a Codex internal thread (${source.name}: an auto-review or other helper, not delegated by spawn_agent)`;
    return { format: 'codex', kind: 'other', what, facts: { threadId } };
  }
  const spawn = source.kind === 'thread-spawn' ? source : undefined;
  const facts: Record<string, string | undefined> = {
    threadId,
    parentThreadId: spawn?.parentThreadId ?? text(meta, 'parent_thread_id'),
    agentRole: spawn?.agentRole ?? text(meta, 'agent_role') ?? text(meta, 'agent_type'),
    agentPath: spawn?.agentPath ?? text(meta, 'agent_path'),
    rootThreadId: text(meta, 'session_id'),
    forkedFromId: text(meta, 'forked_from_id'),
  };
  return {
    format: 'codex',
    kind: 'session',
    facts: Object.fromEntries(Object.entries(facts).filter(([, v]) => v !== undefined)),
  };
}

/** Whether `path` lies under a `sessions/` directory (rather than `archived_sessions/`). */
function isLiveSessionsPath(path: string): boolean {
  return /(^|[\\/])sessions[\\/]/.test(path);
}

/**
 * Groups Codex files into sessions: each root thread with every thread
 * spawned under it, transitively, parents before children (siblings by
 * path, which starts with the creation time). A child whose parent file is
 * absent roots a session of its own, keyed by the root thread its
 * `session_meta` names (`session_id`) when it names one. Two files of one
 * thread (the same rollout in `sessions/` and `archived_sessions/`): the
 * `sessions/` one is read, the other is listed in the same session and
 * skipped. Never throws.
 */
export function groupCodex(files: readonly TranscriptFile[]): TranscriptSession[] {
  const byThread = new Map<string, TranscriptFile>();
  const duplicates: TranscriptFile[] = [];
  for (const file of [...files].sort((a, b) => a.path.localeCompare(b.path))) {
    const id = file.info.facts['threadId'];
    if (id === undefined) continue;
    const kept = byThread.get(id);
    if (kept === undefined) byThread.set(id, file);
    else if (isLiveSessionsPath(file.path) && !isLiveSessionsPath(kept.path)) {
      duplicates.push(kept);
      byThread.set(id, file);
    } else duplicates.push(file);
  }
  const children = new Map<string, TranscriptFile[]>();
  const roots: TranscriptFile[] = [];
  for (const [id, file] of byThread) {
    const parent = file.info.facts['parentThreadId'];
    if (parent !== undefined && parent !== id && byThread.has(parent)) {
      const list = children.get(parent) ?? [];
      list.push(file);
      children.set(parent, list);
    } else roots.push(file);
  }
  const sessions: TranscriptSession[] = [];
  const placed = new Set<string>();
  const sessionOf = new Map<string, TranscriptFile[]>();
  const walk = (file: TranscriptFile, into: TranscriptFile[]): void => {
    const id = file.info.facts['threadId'] ?? '';
    if (placed.has(id)) return;
    placed.add(id);
    into.push(file);
    sessionOf.set(id, into);
    for (const child of children.get(id) ?? []) walk(child, into);
  };
  for (const root of roots.sort((a, b) => a.path.localeCompare(b.path))) {
    const into: TranscriptFile[] = [];
    walk(root, into);
    const id = root.info.facts['threadId'] ?? '';
    const parentAbsent = root.info.facts['parentThreadId'] !== undefined;
    const key = `codex:${parentAbsent ? (root.info.facts['rootThreadId'] ?? id) : id}`;
    sessions.push({ format: 'codex', key, files: into });
  }
  // Threads in a parent cycle (malformed ids) reach no root: each reads as a session of its own.
  for (const [id, file] of byThread)
    if (!placed.has(id)) sessions.push({ format: 'codex', key: `codex:${id}`, files: [file] });
  for (const duplicate of duplicates) {
    const into = sessionOf.get(duplicate.info.facts['threadId'] ?? '');
    if (into !== undefined) into.push(duplicate);
    else
      sessions.push({
        format: 'codex',
        key: `codex:${duplicate.info.facts['threadId'] ?? duplicate.path}`,
        files: [duplicate],
      });
  }
  return sessions;
}

/** One thread's run, read, waiting for its turn to be reported. */
interface ReadThread {
  readonly threadId: string;
  readonly parentThreadId: string | undefined;
  readonly start: RunStart;
  readonly record: RunRecord;
  readonly fileIndex: number;
}

/**
 * Reads one session: every file in order (parents first, so each child
 * gets what its parent recorded about it), then reports the runs, children
 * before parents. With `context.live`, a run is reported only once its file,
 * and every descendant's, has been quiet for `live.idleMs` (a Codex thread
 * can take another turn at any time: a turn's end does not end the run),
 * and never when `live.isReported` says it was, up to its file's last change.
 *
 * @returns one result per file of the session. Never rejects.
 */
export async function readCodexSession(
  session: TranscriptSession,
  context: TranscriptReadContext,
): Promise<readonly TranscriptFileResult[]> {
  const results: TranscriptFileResult[] = session.files.map((file) => ({
    path: file.path,
    records: 0,
    runs: 0,
    isSkipped: false,
  }));
  const files = session.files;
  const kept = new Map<string, number>();
  files.forEach((file, index) => {
    const id = file.info.facts['threadId'];
    if (id !== undefined && !kept.has(id)) kept.set(id, index);
  });
  const live = context.live;
  const isQuiet = (file: TranscriptFile): boolean => isQuietFile(file, context);
  const parentOf = (index: number): string | undefined => {
    const parent = files[index]?.info.facts['parentThreadId'];
    return parent !== undefined && kept.has(parent) && parent !== files[index]?.info.facts['threadId']
      ? parent
      : undefined;
  };
  const childrenOf = new Map<string, number[]>();
  for (const index of kept.values()) {
    const parent = parentOf(index);
    if (parent === undefined) continue;
    const list = childrenOf.get(parent) ?? [];
    list.push(index);
    childrenOf.set(parent, list);
  }
  /** Whether the run of file `index` may be reported now, and whether its file must be read (it, or a descendant, may be). */
  const reportable = new Map<number, boolean>();
  const needed = new Map<number, boolean>();
  const decide = (index: number, seen: Set<number>): void => {
    if (reportable.has(index) || seen.has(index)) return;
    seen.add(index);
    const file = files[index];
    const id = file?.info.facts['threadId'] ?? '';
    const kids = childrenOf.get(id) ?? [];
    for (const kid of kids) decide(kid, seen);
    // Asked before the file is read, with its mtime (never before its last record): a thread that grew since its report is read again.
    const reported = file !== undefined && (live?.isReported(codexRunId(id), file.mtimeMs) ?? false);
    const kidsDone = kids.every((kid) => {
      const kidFile = files[kid];
      return (
        reportable.get(kid) === true ||
        (kidFile !== undefined &&
          (live?.isReported(codexRunId(kidFile.info.facts['threadId'] ?? ''), kidFile.mtimeMs) ?? false))
      );
    });
    reportable.set(index, !reported && file !== undefined && isQuiet(file) && kidsDone);
    needed.set(index, reportable.get(index) === true || kids.some((kid) => needed.get(kid) === true));
  };
  for (const index of kept.values()) decide(index, new Set());

  const books = new Map<string, CodexLinkBook>();
  const read: ReadThread[] = [];
  for (const [index, file] of files.entries()) {
    const id = file.info.facts['threadId'];
    if (id === undefined || kept.get(id) !== index) {
      const other = id !== undefined ? files[kept.get(id) ?? -1]?.path : undefined;
      context.onProblem({
        file: file.path,
        line: 0,
        code: 'duplicate-thread',
        scope: 'file',
        message: `thread ${id ?? '?'} is also in ${other ?? 'another file'}, which is read instead`,
      });
      results[index] = { path: file.path, records: 0, runs: 0, isSkipped: true };
      continue;
    }
    if (needed.get(index) !== true) continue;
    const parentThreadId = parentOf(index);
    const thread = await readThreadFile(
      file,
      session.key,
      parentThreadId,
      parentThreadId !== undefined ? books.get(parentThreadId) : undefined,
      context,
    );
    results[index] = { path: file.path, records: thread.records, runs: 0, isSkipped: thread.run === undefined };
    if (thread.run === undefined) continue;
    books.set(id, thread.run.links);
    if (reportable.get(index) === true)
      read.push({ threadId: id, parentThreadId, start: thread.run.start, record: thread.run.record, fileIndex: index });
  }

  // Children before parents: each run after every run nested under it.
  const byParent = new Map<string | undefined, ReadThread[]>();
  for (const thread of read) {
    const list = byParent.get(thread.parentThreadId) ?? [];
    list.push(thread);
    byParent.set(thread.parentThreadId, list);
  }
  const ordered: ReadThread[] = [];
  const emitted = new Set<string>();
  const visit = (thread: ReadThread): void => {
    if (emitted.has(thread.threadId)) return;
    emitted.add(thread.threadId);
    for (const child of byParent.get(thread.threadId) ?? []) visit(child);
    ordered.push(thread);
  };
  for (const thread of read)
    if (thread.parentThreadId === undefined || !read.some((t) => t.threadId === thread.parentThreadId)) visit(thread);
  for (const thread of read) visit(thread);
  for (const thread of ordered) {
    context.listener.onRunStart(thread.start);
    context.listener.onRunEnd(thread.record);
    const result = results[thread.fileIndex];
    if (result !== undefined) results[thread.fileIndex] = { ...result, runs: result.runs + 1 };
    await context.pause();
  }
  return results;
}

/** What reading one file gave: its records, and its run unless nothing of the file could be read. */
interface ThreadFileResult {
  readonly records: number;
  readonly run?: { readonly start: RunStart; readonly record: RunRecord; readonly links: CodexLinkBook };
}

async function readThreadFile(
  file: TranscriptFile,
  traceKey: string,
  parentThreadId: string | undefined,
  parentBook: CodexLinkBook | undefined,
  context: TranscriptReadContext,
): Promise<ThreadFileResult> {
  let reader: CodexThreadReader | undefined;
  let workspace: RunWorkspace | undefined;
  const facts = file.info.facts;
  const fileProblem = (line: number, code: string, message: string): void =>
    context.onProblem({ file: file.path, line, code, scope: 'file', message });
  const { records, problems } = await readRecords<CodexRecord, WireError>(file, context, {
    parse: parseCodexLine,
    isDefect: isCodexWireError,
    onDefect: (defect, line) => {
      if (reader !== undefined) return 'report';
      fileProblem(
        line,
        defect.code,
        `line ${line} is not a Codex session_meta record (${defect.message}); the file is not read`,
      );
      return 'stop';
    },
    onRecord: (record, line) => {
      if (reader !== undefined) {
        reader.push(record);
        return 'continue';
      }
      if (record.kind !== 'session_meta' || record.meta.id !== facts['threadId']) {
        fileProblem(
          line,
          'not-a-codex-rollout',
          `line ${line} is not the session_meta of thread ${facts['threadId'] ?? '?'}; the file is not read`,
        );
        return 'stop';
      }
      reader = newReader(record.meta, record.time, traceKey, parentThreadId, parentBook, context);
      workspace = workspaceOf(record.meta);
      return 'continue';
    },
  });
  if (reader === undefined) {
    if (records === 0 && problems === 0) fileProblem(0, 'empty-file', 'the file holds no Codex record');
    return { records };
  }
  const record = reader.finish();
  return {
    records,
    run: {
      start: reader.start,
      record: workspace !== undefined ? { ...record, workspace } : record,
      links: reader.links,
    },
  };
}

/** Where the thread worked, as its `session_meta` records it (decision 0124); `undefined` when it records nothing of it. */
function workspaceOf(meta: CodexSessionMeta): RunWorkspace | undefined {
  const workspace: RunWorkspace = {
    ...(meta.cwd !== undefined ? { cwd: meta.cwd } : {}),
    ...(meta.gitBranch !== undefined ? { branch: meta.gitBranch } : {}),
    ...(meta.repositoryUrl !== undefined ? { repositoryUrl: meta.repositoryUrl } : {}),
  };
  return Object.keys(workspace).length > 0 ? workspace : undefined;
}

function newReader(
  meta: CodexSessionMeta,
  time: number,
  traceKey: string,
  parentThreadId: string | undefined,
  parentBook: CodexLinkBook | undefined,
  context: TranscriptReadContext,
): CodexThreadReader {
  const source = meta.source;
  const spawn = source.kind === 'thread-spawn' ? source : undefined;
  const role = spawn?.agentRole ?? meta.agentRole;
  const isChild = spawn !== undefined || meta.parentThreadId !== undefined;
  const agentName = context.agentName ?? (isChild ? (role ?? CODEX_SUBAGENT_NAME) : CODEX_AGENT_NAME);
  const declaredParent = spawn?.parentThreadId ?? meta.parentThreadId;
  const link =
    parentThreadId !== undefined ? findCodexLink(parentBook, meta.id, spawn?.agentPath ?? meta.agentPath) : undefined;
  return new CodexThreadReader(meta, time, {
    traceKey,
    agentName,
    ...(parentThreadId !== undefined ? { parentThreadId } : {}),
    ...(link !== undefined ? { link } : {}),
    ...(parentThreadId === undefined && declaredParent !== undefined ? { missingParentThreadId: declaredParent } : {}),
  });
}
