/**
 * Gemini CLI's chat recordings as a transcript format: telling its files
 * apart (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, legacy
 * `session-*.json` documents, subagents' `chats/<parentSessionId>/<id>.jsonl`,
 * and the CLI's activity logs, which hold no run), grouping them into
 * sessions, and reading each session's files into runs through
 * `transcripts/gemini-cli/runs`.
 *
 * JSONL files are read line by line through the one byte reader
 * (`readLines(fileChunks(...))`: bounded lines, torn tails, CRLF). A legacy
 * document is one JSON value spanning the whole file: it has no line
 * structure to read by, so it is read whole, up to
 * {@link GEMINI_CLI_MAX_DOCUMENT_BYTES}, and parsed at once; a larger one is
 * refused with a problem rather than held in memory.
 *
 * Never throws or rejects: every defect is a problem with its file and
 * line, and the rest is read.
 *
 * Line numbers cited below are of google-gemini/gemini-cli at commit
 * 5411f113cafae26161b4969b0237b8e1e024e2c2 (docs/TRANSCRIPTS.md, "Gemini
 * CLI", says what was read there), unless a comment names another version.
 *
 * @module subagent-otel/transcripts/gemini-cli/files
 */
import { Buffer } from 'node:buffer';
import { basename, dirname, extname } from 'node:path';
import { fileChunks } from '../../wire/file-chunks.js';
import { decodeUtf8Line } from '../../wire/ndjson.js';
import { parseJsonObject } from '../../wire/json-values.js';
import {
  isGeminiCliMetadata,
  legacyDocumentSessionId,
  parseGeminiCliLine,
  parseGeminiCliValue,
  type GeminiCliParsed,
  type GeminiCliParseResult,
} from './records.js';
import type { WireError } from '../../wire/wire-error.js';
import { GEMINI_CLI, GeminiConversation, geminiCliRuns, type GeminiRecording } from './runs.js';
import { isQuietFile, readRecords, type RecordDefect } from '../record-loop.js';
import type {
  TranscriptFile,
  TranscriptFileInfo,
  TranscriptFileResult,
  TranscriptFormat,
  TranscriptHead,
  TranscriptReadContext,
  TranscriptSession,
} from '../format.js';
import { errorMessage } from '../../wire/error-text.js';

/** Largest legacy single-JSON document read (256 MiB): it is parsed whole, so a larger one is refused with a problem. */
export const GEMINI_CLI_MAX_DOCUMENT_BYTES = 256 * 1024 * 1024;

/** Defective records reported per file before the rest of its problems are only counted. */
const MAX_PROBLEMS_PER_FILE = 1000;

/** What the summary calls the CLI's files that hold no run. */
const ACTIVITY_LOG =
  'Gemini CLI activity log (console and network records of a session, logs/session-<id>.jsonl): no run';
const PROMPT_LOG = 'Gemini CLI prompt log (logs.json: the prompts typed, no model output): no run';

/**
 * What a file is to Gemini CLI, by its content and place.
 * @returns `session` for a recording (facts `sessionId`, `kind` `main` or
 *   `subagent`, `layout` `jsonl` or `legacy`, and `parentSessionId` for a
 *   JSONL subagent's), `other` for an activity or prompt log, `undefined`
 *   for a file of anyone else. Never throws.
 */
export function classifyGeminiCli(head: TranscriptHead): TranscriptFileInfo | undefined {
  const name = basename(head.path);
  const first = head.firstLine;
  const folder = basename(dirname(head.path));
  const hasParentFolder = folder !== 'chats' && folder !== '' && folder !== '.';
  // chatRecordingService.ts lines 484-518: a subagent's file is <sessionId>.jsonl in chats/<parentSessionId>/ (<sessionId>.json in 0.37 and 0.38).
  const isInParentFolder =
    hasParentFolder && basename(dirname(dirname(head.path))) === 'chats' && !name.startsWith('session-');
  if (first !== undefined) {
    if (isGeminiCliMetadata(first)) {
      const isSubagent = first.kind === 'subagent' || (first.kind === undefined && isInParentFolder);
      const parentSessionId = isSubagent && hasParentFolder ? folder : undefined;
      return {
        format: GEMINI_CLI,
        kind: 'session',
        facts: { sessionId: first.sessionId, kind: isSubagent ? 'subagent' : 'main', layout: 'jsonl', parentSessionId },
      };
    }
    if (isActivityLogRecord(first)) return { format: GEMINI_CLI, kind: 'other', what: ACTIVITY_LOG, facts: {} };
    return undefined;
  }
  const sessionId = legacyDocumentId(head.prefix);
  if (sessionId !== undefined) {
    // A document writes `kind` after its messages, out of reach of the prefix: only its folder tells a 0.37/0.38 subagent's here (the reader reads `kind`).
    if (isInParentFolder)
      return {
        format: GEMINI_CLI,
        kind: 'session',
        facts: { sessionId, kind: 'subagent', layout: 'legacy', parentSessionId: folder },
      };
    return { format: GEMINI_CLI, kind: 'session', facts: { sessionId, kind: 'main', layout: 'legacy' } };
  }
  if (name === 'logs.json' && /^\uFEFF?\s*\[\s*(?:\]|\{\s*"sessionId"\s*:)/.test(head.prefix))
    return { format: GEMINI_CLI, kind: 'other', what: PROMPT_LOG, facts: {} };
  return undefined;
}

/**
 * The session id of a legacy chat document (`session-<time>-<id>.json`, one
 * pretty-printed JSON value): the record parser answers when the head holds
 * the whole document. A longer one (the usual case: its messages follow the
 * metadata, far past the sniff window) cannot be parsed from the head, and is
 * judged by the first keys it begins with.
 */
function legacyDocumentId(prefix: string): string | undefined {
  const text = prefix.replace(/^\uFEFF/, '');
  const document = text.trimStart().startsWith('{') ? parseJsonObject(text) : undefined;
  if (document === undefined) return legacyDocumentSessionId(prefix);
  const parsed = parseGeminiCliValue(document);
  return parsed.ok && parsed.value.record.kind === 'metadata' ? parsed.value.record.metadata.sessionId : undefined;
}

/** A line of the activity logger (packages/cli/src/utils/activityLogger.ts lines 687-720): `{type: console|network, payload, sessionId, timestamp}`. */
function isActivityLogRecord(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return (
    (record['type'] === 'console' || record['type'] === 'network') &&
    'payload' in record &&
    typeof record['sessionId'] === 'string' &&
    typeof record['timestamp'] === 'number'
  );
}

/**
 * Sessions of Gemini CLI files: a main recording with its subagents (JSONL
 * subagents by their folder, legacy documents by the session id they share
 * with their parent), each keyed `gemini-cli:<main session id>`. Main
 * recordings first, then subagents, each by path.
 */
export function groupGeminiCli(files: readonly TranscriptFile[]): TranscriptSession[] {
  const sessions = new Map<string, TranscriptFile[]>();
  for (const file of files) {
    if (file.info.kind !== 'session') continue;
    const facts = file.info.facts;
    const root =
      (facts['kind'] === 'subagent' ? facts['parentSessionId'] : undefined) ?? facts['sessionId'] ?? file.path;
    sessions.set(root, [...(sessions.get(root) ?? []), file]);
  }
  return [...sessions.entries()].map(([root, members]) => ({
    format: GEMINI_CLI,
    key: `${GEMINI_CLI}:${root}`,
    files: [...members].sort(
      (a, b) =>
        Number(a.info.facts['kind'] === 'subagent') - Number(b.info.facts['kind'] === 'subagent') ||
        a.path.localeCompare(b.path),
    ),
  }));
}

/** What reading one file gave. */
interface FileRead {
  readonly file: TranscriptFile;
  records: number;
  problems: number;
  isSkipped: boolean;
  /** Read, and no run in it: what it is. */
  what?: string;
  recording?: GeminiRecording;
}

/**
 * Reads one session: every file into a rebuilt conversation, then the runs
 * (children before their parents, main recordings last) into
 * `context.listener`, pausing between runs. In `live` mode a run is
 * reported once its end is recorded (a subagent whose parent recorded the
 * delegating call finished) or its file has been quiet for `idleMs`, and
 * when every run nested under it is reported too; runs `isReported` says
 * were reported with this end are skipped; legacy documents, rewritten whole on every
 * change, are read only once every legacy document of the session is quiet.
 * @returns one result per file. Never rejects.
 */
export async function readGeminiCliSession(
  session: TranscriptSession,
  context: TranscriptReadContext,
): Promise<TranscriptFileResult[]> {
  const live = context.live;
  const isQuiet = (file: TranscriptFile): boolean => isQuietFile(file, context);
  const paths = new Set(session.files.map((file) => file.path));
  // A 0.2x subagent's document shares its parent's session id, and which of them is the parent (and so the plain run id) is
  // known only with both read: in live mode a session's legacy documents are read together, once every one is quiet.
  const isLegacyBusy = session.files.some(
    (file) => file.info.facts['layout'] === 'legacy' && !paths.has(`${file.path}l`) && !isQuiet(file),
  );
  const seen = new Map<string, string>();
  const reads: FileRead[] = [];
  for (const file of session.files) {
    const read: FileRead = { file, records: 0, problems: 0, isSkipped: false };
    reads.push(read);
    const layout = file.info.facts['layout'];
    const sessionId = file.info.facts['sessionId'] ?? '';
    // A legacy document resumed by a newer CLI was copied whole into <name>.jsonl beside it (chatRecordingService.ts lines 436-460): that file holds it.
    if (layout === 'legacy' && paths.has(`${file.path}l`)) continue;
    if (layout === 'legacy' && isLegacyBusy) continue;
    const identity = `${sessionId}\u0000${basename(file.path)}`;
    const copy = seen.get(identity);
    if (copy !== undefined) {
      problem(
        context,
        read,
        0,
        'duplicate-session',
        'file',
        `a copy of ${copy} (same session id and file name); skipped`,
      );
      read.isSkipped = true;
      continue;
    }
    seen.set(identity, file.path);
    const conversation = new GeminiConversation();
    if (layout === 'legacy') await readDocument(file, conversation, context, read);
    else await readJsonl(file, conversation, context, read);
    if (read.isSkipped) continue;
    if (conversation.metadata === undefined) {
      problem(
        context,
        read,
        0,
        'not-a-recording',
        'file',
        'no metadata record (sessionId, projectHash) was read: not a Gemini CLI chat recording; skipped',
      );
      read.isSkipped = true;
      continue;
    }
    const isSubagent = file.info.facts['kind'] === 'subagent' || conversation.metadata.kind === 'subagent';
    if (!isSubagent && isWithoutPrompt(conversation)) {
      read.what = UNPROMPTED_SESSION;
      continue;
    }
    read.recording = {
      path: file.path,
      name: basename(file.path, extname(file.path)),
      sessionId: conversation.metadata.sessionId,
      // A legacy document says `kind: "subagent"` (0.31 to 0.38) only after its messages: known once it is read.
      isSubagent,
      isLegacy: layout === 'legacy',
      ...(file.info.facts['parentSessionId'] !== undefined
        ? { parentSessionId: file.info.facts['parentSessionId'] }
        : {}),
      fallbackTime: file.mtimeMs,
      conversation,
    };
  }

  const recordings = reads.flatMap((read) => (read.recording !== undefined ? [read.recording] : []));
  const runsOf = new Map<string, number>();
  const deferred = new Set<string>();
  const byPath = new Map(session.files.map((file) => [file.path, file]));
  for (const run of geminiCliRuns(
    recordings,
    session.key,
    context.agentName !== undefined ? { agentName: context.agentName } : {},
  )) {
    const runId = run.start.runId;
    if (live !== undefined) {
      if (live.isReported(runId, run.record.endTime)) continue;
      const file = byPath.get(run.path);
      const isReady = (run.isEnded || (file !== undefined && isQuiet(file))) && !deferred.has(runId);
      if (!isReady) {
        if (run.start.parentRunId !== undefined) deferred.add(run.start.parentRunId);
        continue;
      }
    }
    context.listener.onRunStart(run.start);
    context.listener.onRunEnd(run.record);
    runsOf.set(run.path, (runsOf.get(run.path) ?? 0) + 1);
    await context.pause();
  }
  return reads.map((read) => ({
    path: read.file.path,
    records: read.records,
    runs: runsOf.get(read.file.path) ?? 0,
    isSkipped: read.isSkipped,
    ...(read.what !== undefined ? { what: read.what } : {}),
  }));
}

/** What the summary says of a main session that never got a prompt. */
export const UNPROMPTED_SESSION = 'Gemini CLI session without a prompt (0.6x writes one when a session starts): no run';

/**
 * Whether a conversation holds nothing but the CLI's own session context
 * (`<session_context>` user messages): no prompt, no model message, no
 * notice. Gemini CLI 0.6x writes such a file for every session it opens,
 * beside the one that gets the prompt.
 */
function isWithoutPrompt(conversation: GeminiConversation): boolean {
  return conversation
    .entries()
    .every(
      (entry) =>
        entry.type === 'user' &&
        (entry.prompt ?? []).every(
          (block) =>
            block.type === 'text' &&
            typeof block.text === 'string' &&
            block.text.trimStart().startsWith('<session_context>'),
        ),
    );
}

/** The format, for the registry. */
export const geminiCliFormat: TranscriptFormat = {
  name: GEMINI_CLI,
  classify: classifyGeminiCli,
  group: groupGeminiCli,
  read: readGeminiCliSession,
};

function problem(
  context: TranscriptReadContext,
  read: FileRead,
  line: number,
  code: string,
  scope: 'file' | 'record',
  message: string,
): void {
  read.problems += 1;
  if (read.problems > MAX_PROBLEMS_PER_FILE) return;
  if (read.problems === MAX_PROBLEMS_PER_FILE) {
    context.onProblem({
      file: read.file.path,
      line,
      code: 'too-many-problems',
      scope: 'record',
      message: `${MAX_PROBLEMS_PER_FILE} problems in this file; further ones are not listed`,
    });
    return;
  }
  context.onProblem({ file: read.file.path, line, code, scope, message });
}

function applyParsed(
  parsed: GeminiCliParseResult,
  line: number,
  conversation: GeminiConversation,
  context: TranscriptReadContext,
  read: FileRead,
): void {
  if (!parsed.ok) {
    problem(context, read, line, parsed.error.code, 'record', `${describe(parsed.error)}; skipped`);
    return;
  }
  for (const issue of parsed.value.issues)
    problem(context, read, line, issue.code, 'record', `${describe(issue)}; that part is skipped`);
  conversation.apply(parsed.value.record);
  read.records += 1;
}

function describe(error: WireError): string {
  return error.code === 'not-json' ? 'not JSON' : error.message;
}

/** Reads a JSONL recording with the one record loop (transcripts/record-loop): a defective part of a message is reported at its line, the rest applied. */
async function readJsonl(
  file: TranscriptFile,
  conversation: GeminiConversation,
  context: TranscriptReadContext,
  read: FileRead,
): Promise<void> {
  const result = await readRecords<{ readonly ok: true; readonly value: GeminiCliParsed }, RecordDefect>(
    file,
    context,
    {
      parse: (text) => {
        const parsed = parseGeminiCliLine(text);
        return parsed.ok ? parsed : { code: parsed.error.code, message: describe(parsed.error) };
      },
      isDefect: (value): value is RecordDefect => !('ok' in value),
      onRecord: (parsed, line) => {
        for (const issue of parsed.value.issues)
          problem(context, read, line, issue.code, 'record', `${describe(issue)}; that part is skipped`);
        conversation.apply(parsed.value.record);
        return 'continue';
      },
    },
  );
  read.records += result.records;
  read.problems += result.problems;
  if (result.isSkipped) read.isSkipped = true;
}

/** Reads a legacy document whole (at most {@link GEMINI_CLI_MAX_DOCUMENT_BYTES}) and applies it as its one metadata record with messages. */
async function readDocument(
  file: TranscriptFile,
  conversation: GeminiConversation,
  context: TranscriptReadContext,
  read: FileRead,
): Promise<void> {
  const tooLarge = (): void => {
    problem(
      context,
      read,
      0,
      'too-large',
      'file',
      `a legacy chat document is parsed whole and this one exceeds ${GEMINI_CLI_MAX_DOCUMENT_BYTES} bytes; skipped`,
    );
    read.isSkipped = true;
  };
  if (file.size > GEMINI_CLI_MAX_DOCUMENT_BYTES) return tooLarge();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of fileChunks(file.path, (bytes) => context.onBytes(file.path, bytes))) {
      total += chunk.length;
      if (total > GEMINI_CLI_MAX_DOCUMENT_BYTES) return tooLarge();
      chunks.push(chunk);
    }
  } catch (error) {
    problem(context, read, 0, 'unreadable', 'file', `cannot read the file: ${errorMessage(error)}`);
    read.isSkipped = true;
    return;
  }
  const text = decodeUtf8Line(Buffer.concat(chunks));
  chunks.length = 0;
  if (!text.ok) {
    problem(context, read, 0, 'invalid-utf8', 'file', 'the document is not UTF-8 text; skipped');
    read.isSkipped = true;
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(text.text) as unknown;
  } catch (error) {
    // SyntaxError: a document cut short (a crash mid-write) or not JSON at all; nothing of it can be trusted.
    problem(context, read, 0, 'not-json', 'file', `the document is not valid JSON (${errorMessage(error)}); skipped`);
    read.isSkipped = true;
    return;
  }
  const parsed = parseGeminiCliValue(value);
  if (!parsed.ok || parsed.value.record.kind !== 'metadata') {
    problem(
      context,
      read,
      0,
      parsed.ok ? 'not-a-recording' : parsed.error.code,
      'file',
      parsed.ok
        ? 'the document has no sessionId and projectHash: not a Gemini CLI chat; skipped'
        : `${describe(parsed.error)}; skipped`,
    );
    read.isSkipped = true;
    return;
  }
  applyParsed(parsed, 0, conversation, context, read);
  read.records = parsed.value.record.messages?.length ?? 0;
}
