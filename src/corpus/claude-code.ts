/**
 * The corpus check's own reading of Claude Code files: which files give a
 * run and under which id, the call that started each subagent, what its
 * parent received, its tokens over distinct responses, and whether its file
 * ends in an API error or an interrupt. Written from the record shapes
 * (docs/TRANSCRIPTS.md, "Claude Code"), sharing no code with the project's
 * reader.
 *
 * @module subagent-otel/corpus/claude-code
 */
import { dirname, sep } from 'node:path';
import { NO_TOKENS, type EndRecord, type ExpectedRun, type Nesting, type Received } from './facts.js';
import { arr, num, obj, str, type Line, type Obj, type ReadFile } from './records.js';
import type { Tokens } from './spans.js';

/** Files that are Claude Code's but never a run, by name. */
const NOT_RUN_NAMES = [
  /^agent-acompact-/,
  /^agent-aside_question-/,
  /^history\.jsonl$/,
  /^sessions-index\.json$/,
  /\.meta\.json$/,
];

interface ClaudeFile {
  readonly file: ReadFile;
  readonly sessionId: string;
  /** The agent id for `agent-<id>.jsonl`, else undefined (a session file). */
  readonly agentId: string | undefined;
  readonly records: readonly { n: number; o: Obj }[];
}

function records(file: ReadFile): { n: number; o: Obj }[] {
  return file.lines.flatMap((l: Line) => (obj(l.value) !== undefined ? [{ n: l.n, o: obj(l.value) as Obj }] : []));
}

/** Text of a message content: a string, or its text blocks joined with a newline. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return arr(content)
    .flatMap((b) =>
      obj(b)?.['type'] === 'text' && str(obj(b)?.['text']) !== undefined ? [str(obj(b)?.['text']) as string] : [],
    )
    .join('\n');
}

function isAssistant(o: Obj): boolean {
  return o['type'] === 'assistant' || (o['type'] === undefined && obj(o['message'])?.['role'] === 'assistant');
}

function firstUserText(recs: readonly { o: Obj }[]): string | undefined {
  const first = recs.find((r) => r.o['type'] === 'user');
  return first === undefined ? undefined : contentText(obj(first.o['message'])?.['content']);
}

/** The tool_result blocks of a user record. */
function toolResults(o: Obj): Obj[] {
  if (o['type'] !== 'user') return [];
  return arr(obj(o['message'])?.['content']).flatMap((b) =>
    obj(b)?.['type'] === 'tool_result' ? [obj(b) as Obj] : [],
  );
}

/** Tokens of a set of records: assistant lines grouped by `message.id`, per field the largest, `<synthetic>` skipped. */
function tokensOf(recs: readonly { o: Obj }[], skipIds: ReadonlySet<string>, parentUsage: Obj | undefined): Tokens {
  const groups = new Map<string, { input: number; cacheRead: number; cacheWrite: number; output: number }>();
  let anonymous = 0;
  for (const { o } of recs) {
    if (!isAssistant(o)) continue;
    const message = obj(o['message']);
    if (message === undefined || message['model'] === '<synthetic>') continue;
    const id = str(message['id']) ?? `#${(anonymous += 1)}`;
    if (skipIds.has(id)) continue;
    const usage = obj(message['usage']);
    const g = groups.get(id) ?? { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
    g.input = Math.max(g.input, num(usage?.['input_tokens']));
    g.cacheRead = Math.max(g.cacheRead, num(usage?.['cache_read_input_tokens']));
    g.cacheWrite = Math.max(g.cacheWrite, num(usage?.['cache_creation_input_tokens']));
    g.output = Math.max(g.output, num(usage?.['output_tokens']));
    groups.set(id, g);
  }
  // The parent's toolUseResult.usage is the final usage of the subagent's last request (docs/TRANSCRIPTS.md):
  // it completes the last response when input, cache-read and cache-write counts are that response's.
  const last = [...groups.values()].at(-1);
  if (
    last !== undefined &&
    parentUsage !== undefined &&
    num(parentUsage['input_tokens']) === last.input &&
    num(parentUsage['cache_read_input_tokens']) === last.cacheRead &&
    num(parentUsage['cache_creation_input_tokens']) === last.cacheWrite
  ) {
    last.output = Math.max(last.output, num(parentUsage['output_tokens']));
  }
  let t = NO_TOKENS;
  for (const g of groups.values()) {
    t = {
      input: t.input + g.input + g.cacheRead + g.cacheWrite,
      output: t.output + g.output,
      cacheRead: t.cacheRead + g.cacheRead,
      cacheWrite: t.cacheWrite + g.cacheWrite,
    };
  }
  return t;
}

/** The last user or assistant record, described when it is an API error or an interrupt. */
function endsIn(recs: readonly { n: number; o: Obj }[]): EndRecord | undefined {
  const last = [...recs].reverse().find((r) => r.o['type'] === 'user' || isAssistant(r.o));
  if (last === undefined) return undefined;
  const message = obj(last.o['message']);
  if (
    isAssistant(last.o) &&
    (last.o['isApiErrorMessage'] === true ||
      (message?.['model'] === '<synthetic>' && contentText(message['content']).startsWith('API Error')))
  ) {
    const text = contentText(message?.['content']);
    const cut = last.o['error'] === 'max_output_tokens' || /exceeded the \d+ output token maximum/.test(text);
    return {
      what: `line ${last.n}: an API error record (${str(last.o['error']) ?? text.slice(0, 60)})`,
      ...(cut ? { implies: 'max-tokens' as const } : {}),
    };
  }
  if (last.o['type'] === 'user' && contentText(message?.['content']).startsWith('[Request interrupted by user')) {
    return {
      what: `line ${last.n}: an interrupt record ("${contentText(message?.['content']).slice(0, 60)}")`,
      implies: 'aborted',
    };
  }
  return undefined;
}

/** Drops Claude Code's `agentId: …` trailer (and the `<usage>` block after it) from what a parent received. */
export function withoutAgentTrailer(text: string): string {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => /^agentId: \S+/.test(l));
  return at === -1 ? text : lines.slice(0, at).join('\n');
}

/** Where a call's tool_result is, and what it says. */
function findResult(parent: ClaudeFile, callId: string): { n: number; o: Obj; block: Obj } | undefined {
  for (const r of parent.records) {
    if (r.o['isSidechain'] === true && parent.agentId === undefined) continue;
    const block = toolResults(r.o).find((b) => b['tool_use_id'] === callId);
    if (block !== undefined) return { n: r.n, o: r.o, block };
  }
  return undefined;
}

/**
 * The text a record delivered to the model as the user's: a user line's
 * content, or the `prompt` of a `queued_command` attachment (a notification
 * that arrived mid-turn; 2.1.337 writes a background agent's notification so
 * when the agent ends before its parent's next model call). Else undefined.
 */
function deliveredText(o: Obj): string | undefined {
  if (o['type'] === 'user') return contentText(obj(o['message'])?.['content']);
  const attachment = obj(o['attachment']);
  if (o['type'] === 'attachment' && attachment?.['type'] === 'queued_command') return str(attachment['prompt']);
  return undefined;
}

function received(parent: ClaudeFile, callId: string, agentId: string, isWorkflow: boolean): Received {
  if (isWorkflow) return { unchecked: 'an agent a Workflow ran: its parent receives no report of it' };
  const found = findResult(parent, callId);
  if (found === undefined) return { unchecked: `the parent's file holds no result for call ${callId}` };
  if (found.block['is_error'] === true) {
    return {
      unchecked: `the parent received an error, not a report (line ${found.n}: "${withoutAgentTrailer(contentText(found.block['content'])).slice(0, 60)}")`,
    };
  }
  const result = obj(found.o['toolUseResult']);
  if (result?.['status'] === 'async_launched' || result?.['isAsync'] === true) {
    // A background agent: its report is the <result> of the parent's later <task-notification> for it.
    let notification: { n: number; text: string } | undefined;
    for (const r of parent.records) {
      const text = deliveredText(r.o);
      if (text === undefined) continue;
      if (text.includes('<task-notification>') && text.includes(`<task-id>${agentId}</task-id>`))
        notification = { n: r.n, text };
    }
    if (notification === undefined)
      return { unchecked: `background agent: the parent's file holds no <task-notification> for ${agentId}` };
    const m = /<result>([\s\S]*?)<\/result>/.exec(notification.text) ?? /<result>([\s\S]*)$/.exec(notification.text);
    if (m === null)
      return { unchecked: `background agent: its <task-notification> (line ${notification.n}) holds no <result>` };
    return { text: m[1] ?? '', source: `line ${notification.n}: <result> of the <task-notification>` };
  }
  const content = found.block['content'];
  const blocks =
    typeof content === 'string'
      ? [content]
      : arr(content).flatMap((b) => (obj(b)?.['type'] === 'text' ? [str(obj(b)?.['text']) ?? ''] : []));
  const kept = blocks.map(withoutAgentTrailer).filter((t, i) => !(t === '' && blocks[i] !== ''));
  return { text: kept.join('\n'), source: `line ${found.n}: the tool_result of ${callId}` };
}

/** The call that started `agentId`, searched in `candidates` (the session file first). */
function startingCall(
  agentId: string,
  candidates: readonly ClaudeFile[],
  sidecarCall: string | undefined,
  workflowRun: string | undefined,
): { parent: ClaudeFile; callId: string } | undefined {
  for (const parent of candidates) {
    for (const r of parent.records) {
      if (parent.agentId === undefined && r.o['isSidechain'] === true) continue;
      const result = obj(r.o['toolUseResult']);
      const blocks = toolResults(r.o);
      if (workflowRun !== undefined) {
        if (result?.['runId'] === workflowRun && blocks[0] !== undefined)
          return { parent, callId: str(blocks[0]['tool_use_id']) ?? '' };
        continue;
      }
      if (result?.['agentId'] === agentId && blocks.length > 0) {
        const block = blocks.length === 1 ? blocks[0] : blocks.find((b) => contentText(b['content']).includes(agentId));
        const id = str(block?.['tool_use_id']);
        if (id !== undefined) return { parent, callId: id };
      }
      for (const b of blocks) {
        const id = str(b['tool_use_id']);
        if (
          id !== undefined &&
          new RegExp(`(^|\\n)agentId: ${agentId.replace(/[^\w-]/g, '\\$&')}\\b`).test(contentText(b['content']))
        )
          return { parent, callId: id };
      }
      const data = obj(r.o['data']);
      if (
        r.o['type'] === 'progress' &&
        data?.['type'] === 'agent_progress' &&
        data['agentId'] === agentId &&
        str(r.o['parentToolUseID']) !== undefined
      ) {
        return { parent, callId: str(r.o['parentToolUseID']) ?? '' };
      }
    }
  }
  if (sidecarCall !== undefined) {
    for (const parent of candidates) {
      const has = parent.records.some(
        (r) =>
          isAssistant(r.o) &&
          arr(obj(r.o['message'])?.['content']).some(
            (b) => obj(b)?.['type'] === 'tool_use' && obj(b)?.['id'] === sidecarCall,
          ),
      );
      if (has) return { parent, callId: sidecarCall };
    }
  }
  return undefined;
}

function runIdOf(f: ClaudeFile): string {
  return f.agentId === undefined ? `claude-code:${f.sessionId}` : `claude-code:${f.sessionId}/agent-${f.agentId}`;
}

/** What every Claude Code file among `files` should give. */
export function claudeCodeExpectations(files: readonly ReadFile[]): ExpectedRun[] {
  const sidecars = new Map<string, string>(); // `<dir>/<agentId>` -> toolUseId
  const runFiles: ClaudeFile[] = [];
  for (const file of files) {
    if (file.name.endsWith('.meta.json')) {
      const call = str(obj(file.lines[0]?.value)?.['toolUseId']);
      const agentId = /^agent-(.+)\.meta\.json$/.exec(file.name)?.[1];
      if (call !== undefined && agentId !== undefined) sidecars.set(`${dirname(file.path)}${sep}${agentId}`, call);
      continue;
    }
    if (NOT_RUN_NAMES.some((re) => re.test(file.name))) continue;
    if (file.name === 'journal.jsonl' && file.path.split(sep).includes('workflows')) continue;
    const recs = records(file);
    // A session file is named after its session (Claude Code names it so); its lines may carry an earlier
    // conversation's id first (a summary carried over). An agent's file: the id its lines carry.
    const stem = file.name.replace(/\.jsonl$/, '');
    const named = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(stem) ? stem : undefined;
    const sessionId = named ?? recs.map((r) => str(r.o['sessionId'])).find((s) => s !== undefined);
    if (sessionId === undefined || !recs.some((r) => str(r.o['timestamp']) !== undefined)) continue; // no run: nothing timed
    const agentId = /^agent-(.+)\.jsonl$/.exec(file.name)?.[1];
    if (agentId !== undefined && firstUserText(recs)?.trim() === 'Warmup') continue; // a 2.0.x warm-up, not a subagent
    runFiles.push({ file, sessionId, agentId, records: recs });
  }

  // A message id is counted once per session: in the file that wrote it first (a fork's replay is not its work).
  const firstWriter = new Map<string, { at: string; file: string }>();
  for (const f of runFiles) {
    for (const { o } of f.records) {
      if (!isAssistant(o) || (f.agentId === undefined && o['isSidechain'] === true)) continue;
      const id = str(obj(o['message'])?.['id']);
      const at = str(o['timestamp']) ?? '';
      if (id === undefined) continue;
      const key = `${f.sessionId} ${id}`;
      const seen = firstWriter.get(key);
      if (seen === undefined || at < seen.at) firstWriter.set(key, { at, file: f.file.path });
    }
  }
  const skipIdsOf = (f: ClaudeFile): Set<string> => {
    const skip = new Set<string>();
    for (const { o } of f.records) {
      const id = str(obj(o['message'])?.['id']);
      if (id !== undefined && isAssistant(o) && firstWriter.get(`${f.sessionId} ${id}`)?.file !== f.file.path)
        skip.add(id);
    }
    return skip;
  };

  const sessions = new Map<string, ClaudeFile>();
  for (const f of runFiles) if (f.agentId === undefined && !sessions.has(f.sessionId)) sessions.set(f.sessionId, f);

  return runFiles.map((f): ExpectedRun => {
    const own = f.agentId === undefined ? f.records.filter((r) => r.o['isSidechain'] !== true) : f.records;
    if (f.agentId === undefined) {
      return {
        file: f.file.path,
        format: 'claude-code',
        runIds: [runIdOf(f)],
        isSubagent: false,
        outputMode: 'text',
        tokens: tokensOf(own, skipIdsOf(f), undefined),
        ...withEnd(endsIn(own)),
      };
    }
    const agentId = f.agentId;
    const parts = f.file.path.split(sep);
    const wf = parts.lastIndexOf('workflows');
    const workflowRun = wf !== -1 && wf + 2 < parts.length ? parts[wf + 1] : undefined;
    const session = sessions.get(f.sessionId);
    const candidates = [
      ...(session !== undefined ? [session] : []),
      ...runFiles.filter((o) => o !== f && o.agentId !== undefined && o.sessionId === f.sessionId),
    ];
    const call = startingCall(
      agentId,
      candidates,
      sidecars.get(`${dirname(f.file.path)}${sep}${agentId}`),
      workflowRun,
    );
    let nesting: Nesting;
    let got: Received;
    let parentUsage: Obj | undefined;
    if (call !== undefined) {
      nesting = { kind: 'call', callId: call.callId, parentRunIds: [runIdOf(call.parent)] };
      got = received(call.parent, call.callId, agentId, workflowRun !== undefined);
      parentUsage = obj(obj(findResult(call.parent, call.callId)?.o['toolUseResult'])?.['usage']);
    } else if (session !== undefined) {
      nesting = { kind: 'run', parentRunIds: [runIdOf(session)] };
      got = { unchecked: `no call in the session's files names agent ${agentId}` };
    } else {
      nesting = { kind: 'unchecked', why: `its session file (${f.sessionId}.jsonl) is not among the files read` };
      got = { unchecked: `its session file (${f.sessionId}.jsonl) is not among the files read` };
    }
    return {
      file: f.file.path,
      format: 'claude-code',
      runIds: [runIdOf(f)],
      isSubagent: true,
      nesting,
      received: got,
      outputMode: 'text',
      tokens: tokensOf(own, skipIdsOf(f), parentUsage),
      ...withEnd(endsIn(own)),
    };
  });
}

function withEnd(end: EndRecord | undefined): { endsIn?: EndRecord } {
  return end === undefined ? {} : { endsIn: end };
}
