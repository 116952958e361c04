/**
 * The corpus check's own reading of Gemini CLI chat recordings (JSON lines
 * from 0.39, one JSON document before): which files give a run and under
 * which id, the delegating call that ran each subagent, what the parent
 * received, tokens per model message, and whether the recording ends in an
 * error or a cancellation. Written from the record shapes
 * (docs/TRANSCRIPTS.md, "Gemini CLI"), sharing no code with the project's
 * reader.
 *
 * @module subagent-otel/corpus/gemini-cli
 */
import { basename, dirname } from 'node:path';
import { NO_TOKENS, type EndRecord, type ExpectedRun, type Nesting, type Received } from './facts.js';
import { arr, num, obj, str, type Obj, type ReadFile } from './records.js';
import type { Tokens } from './spans.js';

interface Chat {
  readonly file: ReadFile;
  readonly sessionId: string;
  readonly kind: string | undefined;
  readonly startTime: string;
  /** The conversation after re-appends (last record of an id wins, in its first place), rewinds and replacements. */
  readonly messages: readonly Obj[];
  /** `chats/<parent session id>/<file>`: the folder's name. */
  readonly folderSessionId: string | undefined;
}

const DELEGATING = new Set(['invoke_agent', 'delegate_to_agent']);

function rebuild(records: readonly Obj[]): { meta: Obj | undefined; messages: Obj[] } {
  let meta: Obj | undefined;
  let messages: Obj[] = [];
  for (const o of records) {
    if (str(o['sessionId']) !== undefined && str(o['projectHash']) !== undefined) {
      meta = { ...(meta ?? {}), ...o };
      continue;
    }
    if (typeof o['$rewindTo'] === 'string') {
      const at = messages.findIndex((m) => m['id'] === o['$rewindTo']);
      if (at !== -1) messages = messages.slice(0, at);
      continue;
    }
    const set = obj(o['$set']);
    if (set !== undefined) {
      if (Array.isArray(set['messages']))
        messages = arr(set['messages']).flatMap((m) => (obj(m) !== undefined ? [obj(m) as Obj] : []));
      meta = { ...(meta ?? {}), ...set };
      continue;
    }
    if (typeof o['id'] === 'string' && typeof o['type'] === 'string') {
      const at = messages.findIndex((m) => m['id'] === o['id']);
      if (at === -1) messages.push(o);
      else messages[at] = o;
    }
  }
  return { meta, messages };
}

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  return arr(content)
    .flatMap((p) => (str(obj(p)?.['text']) !== undefined ? [str(obj(p)?.['text']) as string] : []))
    .join('\n');
}

function tokensOf(messages: readonly Obj[]): Tokens {
  let t = NO_TOKENS;
  for (const m of messages) {
    const k = obj(m['tokens']);
    if (m['type'] !== 'gemini' || k === undefined) continue;
    t = {
      input: t.input + num(k['input']) + num(k['tool']),
      output: t.output + num(k['output']) + num(k['thoughts']),
      cacheRead: t.cacheRead + num(k['cached']),
      cacheWrite: 0,
    };
  }
  return t;
}

function endsIn(messages: readonly Obj[]): EndRecord | undefined {
  const last = messages.at(-1);
  if (last === undefined) return undefined;
  const content = text(last['content']);
  if (last['type'] === 'error') {
    const cut = /truncated because it exceeded the token limit|MAX_TOKENS/.test(content);
    return {
      what: `its last message is an error record ("${content.slice(0, 60)}")`,
      ...(cut ? { implies: 'max-tokens' as const } : {}),
    };
  }
  if (last['type'] === 'info' && /^(Request cancelled\.|User cancelled the request\.)/.test(content.trim())) {
    return { what: `its last message is a cancellation notice ("${content.slice(0, 60)}")`, implies: 'aborted' };
  }
  return undefined;
}

function calls(chat: Chat): Obj[] {
  return chat.messages.flatMap((m) =>
    arr(m['toolCalls']).flatMap((c) => (obj(c) !== undefined ? [obj(c) as Obj] : [])),
  );
}

function taskOf(call: Obj): string | undefined {
  const args = obj(call['args']);
  return str(args?.['prompt']) ?? str(args?.['objective']) ?? str(args?.['query']);
}

function isDelegating(call: Obj): boolean {
  const output = responseOutput(call);
  return (
    DELEGATING.has(str(call['name']) ?? '') ||
    str(obj(call['args'])?.['agent_name']) !== undefined ||
    /^Subagent '/.test(output ?? '')
  );
}

function responseOutput(call: Obj): string | undefined {
  for (const r of arr(call['result'])) {
    const out = obj(obj(obj(r)?.['functionResponse'])?.['response'])?.['output'];
    if (typeof out === 'string') return out;
  }
  return undefined;
}

function received(call: Obj, chat: Chat): Received {
  const status = str(call['status']);
  if (status === 'cancelled' || status === 'error')
    return { unchecked: `the delegating call ended ${status}: the parent received no report` };
  if (!chat.messages.some((m) => m['type'] === 'gemini'))
    return { unchecked: "the subagent's recording holds no model message (its model turns went unrecorded)" };
  const out = responseOutput(call);
  if (out === undefined) return { unchecked: 'the delegating call holds no response output' };
  if (/^Subagent '[^']*' failed\./.test(out))
    return { unchecked: `the parent received a failure, not a report ("${out.slice(0, 80)}")` };
  const m = /^Subagent '[^']*' finished\.\nTermination Reason: ([^\n]*)\nResult:\n([\s\S]*)$/.exec(out);
  // A subagent that did not reach its goal hands its parent the reason it stopped, not its answer (0.6x ERROR_NO_COMPLETE_TASK_CALL).
  if (m !== null && m[1] !== 'GOAL')
    return { unchecked: `the parent received termination ${m[1] ?? '?'}, not a report` };
  return {
    text: m === null ? out : (m[2] ?? ''),
    source: `the response of call ${str(call['id']) ?? '?'}${m === null ? '' : ' (after "Result:")'}`,
  };
}

/** What every Gemini CLI recording among `files` should give. */
export function geminiCliExpectations(files: readonly ReadFile[]): ExpectedRun[] {
  const chats: Chat[] = [];
  for (const file of files) {
    if (file.name === 'logs.json' || file.name.startsWith('checkpoint-')) continue;
    const values = file.lines.flatMap((l) => (obj(l.value) !== undefined ? [obj(l.value) as Obj] : []));
    if (values.some((o) => typeof o['timestamp'] === 'number' && obj(o['payload']) !== undefined)) continue; // an activity log: no run
    let meta: Obj | undefined;
    let messages: Obj[];
    if (file.isDocument) {
      meta = values[0];
      messages = arr(meta?.['messages']).flatMap((m) => (obj(m) !== undefined ? [obj(m) as Obj] : []));
    } else {
      ({ meta, messages } = rebuild(values));
    }
    const sessionId = str(meta?.['sessionId']);
    if (sessionId === undefined) continue;
    // 0.6x writes a main session for every session it opens; one holding only the CLI's <session_context> got no prompt: no run.
    const textOf = (content: unknown): string =>
      typeof content === 'string'
        ? content
        : arr(content)
            .map((p) => str(obj(p)?.['text']) ?? '')
            .join('');
    const contextOnly = messages.every(
      (m) => m['type'] === 'user' && textOf(m['content']).trimStart().startsWith('<session_context>'),
    );
    if (str(meta?.['kind']) !== 'subagent' && contextOnly) continue;
    const folder = basename(dirname(file.path));
    const chatsDir = basename(dirname(dirname(file.path)));
    chats.push({
      file,
      sessionId,
      kind: str(meta?.['kind']),
      startTime: str(meta?.['startTime']) ?? '',
      messages,
      folderSessionId: chatsDir === 'chats' && folder !== 'chats' ? folder : undefined,
    });
  }
  const bySession = new Map<string, Chat[]>();
  for (const c of chats) bySession.set(c.sessionId, [...(bySession.get(c.sessionId) ?? []), c]);
  const runIdsOf = (c: Chat): string[] => {
    const same = (bySession.get(c.sessionId) ?? []).filter((o) => o.file.isDocument);
    const stem = c.file.name.replace(/\.jsonl?$/, '');
    return same.length > 1
      ? [`gemini-cli:${c.sessionId}/${stem}`, `gemini-cli:${c.sessionId}`]
      : [`gemini-cli:${c.sessionId}`];
  };
  const firstPrompt = (c: Chat): string => text(c.messages.find((m) => m['type'] === 'user')?.['content']);

  return chats.map((c): ExpectedRun => {
    const tokens = tokensOf(c.messages);
    const end = endsIn(c.messages);
    const base = {
      file: c.file.path,
      format: 'gemini-cli' as const,
      runIds: runIdsOf(c),
      outputMode: 'gemini-answer' as const,
      tokens,
      ...(end !== undefined ? { endsIn: end } : {}),
    };
    // Parents: the main session of the folder's id, or another document of the same session id.
    const parents = [
      ...(c.folderSessionId !== undefined ? (bySession.get(c.folderSessionId) ?? []) : []),
      ...(bySession.get(c.sessionId) ?? []).filter((o) => o !== c),
    ].filter((p) => p.folderSessionId === undefined || p.folderSessionId !== c.folderSessionId);
    let found: { parent: Chat; call: Obj } | undefined;
    for (const parent of parents) {
      const call =
        calls(parent).find((k) => k['agentId'] === c.sessionId) ??
        calls(parent).find(
          (k) =>
            k['agentId'] === undefined &&
            isDelegating(k) &&
            taskOf(k) !== undefined &&
            firstPrompt(c).includes(taskOf(k) as string),
        ) ??
        // A subagent whose recording was emptied when it was cancelled (0.6x): the delegating call, unnamed, that ended after it started.
        (c.messages.length === 0
          ? calls(parent).find(
              (k) =>
                k['agentId'] === undefined &&
                isDelegating(k) &&
                (str(k['timestamp']) ?? '') >= c.startTime &&
                c.startTime !== '',
            )
          : undefined);
      if (call !== undefined) {
        found = { parent, call };
        break;
      }
    }
    const isSubagent = c.kind === 'subagent' || c.folderSessionId !== undefined || found !== undefined;
    if (!isSubagent) return { ...base, isSubagent: false };
    let nesting: Nesting;
    let got: Received;
    if (found !== undefined) {
      nesting = { kind: 'call', callId: str(found.call['id']) ?? '', parentRunIds: runIdsOf(found.parent) };
      got = received(found.call, c);
    } else if (parents.length > 0 && parents[0] !== undefined) {
      nesting = { kind: 'run', parentRunIds: runIdsOf(parents[0]) };
      got = { unchecked: 'no delegating call of the parent names or encloses this subagent' };
    } else {
      nesting = {
        kind: 'unchecked',
        why: `its parent's recording (session ${c.folderSessionId ?? '?'}) is not among the files read`,
      };
      got = { unchecked: nesting.why };
    }
    return { ...base, isSubagent: true, nesting, received: got };
  });
}
