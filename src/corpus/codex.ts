/**
 * The corpus check's own reading of Codex rollouts: which files give a run
 * (a thread; Codex's own helper threads do not), the `spawn_agent` call that
 * started each child, what the parent last received as the child's final
 * status, the child's tokens from its own `token_count` totals, and whether
 * its last turn ended in an error or an abort. Written from the record
 * shapes (docs/TRANSCRIPTS.md, "Codex"), sharing no code with the project's
 * reader.
 *
 * @module subagent-otel/corpus/codex
 */
import { NO_TOKENS, type EndRecord, type ExpectedRun, type Nesting, type Received } from './facts.js';
import { arr, num, obj, str, type Obj, type ReadFile } from './records.js';
import type { Tokens } from './spans.js';

interface Rollout {
  readonly file: ReadFile;
  readonly threadId: string;
  readonly records: readonly { n: number; o: Obj }[];
  /** `thread_spawn` of a child, else undefined. */
  readonly spawn: Obj | undefined;
  readonly isHelper: boolean;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined; // not JSON: the output is plain text, which names no agent
  }
}

function payload(o: Obj): Obj {
  return obj(o['payload']) ?? {};
}

/** Index of the first record after the copy of the parent's history a forked child starts with (1 when there is none). */
function ownStart(child: Rollout, parent: Rollout | undefined): number | { unchecked: string } {
  const second = child.records[1]?.o;
  if (second === undefined || second['type'] !== 'session_meta' || payload(second)['id'] === child.threadId) return 1;
  const start = num(payload(child.records[0]?.o ?? {})['subagent_history_start_ordinal']);
  if (start > 0) {
    const at = child.records.findIndex(
      (r) => typeof r.o['ordinal'] === 'number' && (r.o['ordinal'] as number) >= start,
    );
    if (at !== -1) return at;
  }
  if (parent === undefined)
    return {
      unchecked: 'a forked child read without its parent: where its copy of the parent history ends is unknown',
    };
  // The copy holds the parent's records (the same payloads, new timestamps), possibly fewer of them.
  const inParent = new Map<string, number>();
  for (const r of parent.records) {
    const key = JSON.stringify(payload(r.o));
    inParent.set(key, (inParent.get(key) ?? 0) + 1);
  }
  let i = 1;
  for (; i < child.records.length; i += 1) {
    const key = JSON.stringify(payload(child.records[i]?.o ?? {}));
    const left = inParent.get(key) ?? 0;
    if (left === 0) break;
    inParent.set(key, left - 1);
  }
  // Codex 0.110-0.118 ends the copy with a tool output of its own ("You are the newly spawned agent…").
  const next = child.records[i]?.o;
  if (
    next !== undefined &&
    payload(next)['type'] === 'function_call_output' &&
    (str(payload(next)['output']) ?? '').includes('newly spawned agent')
  )
    i += 1;
  return i;
}

function totalOf(o: Obj): Obj | undefined {
  return payload(o)['type'] === 'token_count' ? obj(obj(payload(o)['info'])?.['total_token_usage']) : undefined;
}

/** Sum of the increases of the cumulative totals from `from` on, starting at the last total before it. */
function tokensFrom(recs: readonly { o: Obj }[], from: number): Tokens {
  let base: Obj | undefined;
  for (let i = 0; i < from; i += 1) base = totalOf(recs[i]?.o ?? {}) ?? base;
  const fields = ['input_tokens', 'cached_input_tokens', 'output_tokens'] as const;
  const sum = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0 };
  for (let i = from; i < recs.length; i += 1) {
    const total = totalOf(recs[i]?.o ?? {});
    if (total === undefined) continue;
    const deltas = fields.map((f) => num(total[f]) - num(base?.[f]));
    if (deltas.some((d) => d < 0)) {
      base = total; // the totals were reset: a new baseline, no response
      continue;
    }
    fields.forEach((f, k) => (sum[f] += deltas[k] ?? 0));
    base = total;
  }
  return { ...NO_TOKENS, input: sum.input_tokens, cacheRead: sum.cached_input_tokens, output: sum.output_tokens };
}

/** The last turn's end when it is an error or an abort. */
function endsIn(recs: readonly { n: number; o: Obj }[], from: number): EndRecord | undefined {
  let lastStart = -1;
  for (let i = from; i < recs.length; i += 1) {
    const t = payload(recs[i]?.o ?? {})['type'];
    if (recs[i]?.o['type'] === 'event_msg' && (t === 'task_started' || t === 'turn_started')) lastStart = i;
  }
  if (lastStart === -1) return undefined;
  for (let i = lastStart; i < recs.length; i += 1) {
    const r = recs[i];
    if (r === undefined || r.o['type'] !== 'event_msg') continue;
    const p = payload(r.o);
    if (p['type'] === 'turn_aborted')
      return { what: `line ${r.n}: turn_aborted (${str(p['reason']) ?? 'no reason'})`, implies: 'aborted' };
    if (p['type'] === 'error') return errorEnd(`line ${r.n}: an error event`, str(p['message']) ?? '');
    if (
      (p['type'] === 'task_complete' || p['type'] === 'turn_complete') &&
      p['error'] !== undefined &&
      p['error'] !== null
    ) {
      return errorEnd(
        `line ${r.n}: ${String(p['type'])} with an error`,
        str(obj(p['error'])?.['message']) ?? JSON.stringify(p['error']),
      );
    }
  }
  return undefined;
}

/** An error that ends a turn; "Incomplete response returned, reason: max_output_tokens" is a response cut at its limit. */
function errorEnd(where: string, message: string): EndRecord {
  const cut = /Incomplete response returned, reason: max_output_tokens/.test(message);
  return { what: `${where} ("${message.slice(0, 80)}")`, ...(cut ? { implies: 'max-tokens' as const } : {}) };
}

/** The child's entry in a status map (`{<id or path>: {completed: …}}`). */
function statusEntry(status: unknown, keys: readonly string[]): Obj | undefined {
  const map = obj(status);
  if (map === undefined) return undefined;
  for (const k of keys) if (obj(map[k]) !== undefined) return obj(map[k]);
  return undefined;
}

function reportOf(entry: Obj | undefined, where: string): Received | undefined {
  if (entry === undefined) return undefined;
  if (typeof entry['completed'] === 'string') return { text: entry['completed'], source: where };
  if (entry['completed'] === null) return { text: '', source: `${where} (completed with no message)` };
  if (entry['errored'] !== undefined)
    return {
      unchecked: `the parent received an error, not a report (${where}: "${String(entry['errored']).slice(0, 80)}")`,
    };
  return undefined;
}

/** What the parent last received as the child's final status. */
function received(parent: Rollout, keys: readonly string[]): Received {
  const calls = new Map<string, string>();
  let last: Received | undefined;
  for (const { n, o } of parent.records) {
    const p = payload(o);
    if (p['type'] === 'function_call' && typeof p['call_id'] === 'string')
      calls.set(p['call_id'], str(p['name']) ?? '');
    if (p['type'] === 'function_call_output') {
      const name = calls.get(str(p['call_id']) ?? '') ?? '';
      const out = obj(parseJson(str(p['output']) ?? str(obj(p['output'])?.['content'])));
      if (name === 'wait' || name === 'wait_agent')
        last = reportOf(statusEntry(out?.['status'], keys), `line ${n}: ${name} output`) ?? last;
      if (name === 'close_agent')
        last =
          reportOf(
            obj(out?.['previous_status']) ?? statusEntry(out?.['status'], keys),
            `line ${n}: close_agent output`,
          ) ?? last;
    }
    if (p['type'] === 'message') {
      for (const block of arr(p['content'])) {
        let text = str(obj(block)?.['text']) ?? '';
        text = str(obj(parseJson(text))?.['content']) ?? text;
        for (const m of text.matchAll(/<subagent_notification>\s*([\s\S]*?)\s*<\/subagent_notification>/g)) {
          const note = obj(parseJson(m[1]));
          const who = [str(note?.['agent_path']), str(note?.['agent_id']), str(note?.['thread_id'])];
          if (who.some((w) => w !== undefined && keys.includes(w)))
            last = reportOf(obj(note?.['status']), `line ${n}: <subagent_notification>`) ?? last;
        }
      }
    }
  }
  return last ?? { unchecked: "the parent's file records no final status of this child" };
}

/** The parent's `spawn_agent` call whose output (or spawn end event) names the child. */
function startingCall(parent: Rollout, child: Rollout): string | undefined {
  const keys = [child.threadId, str(child.spawn?.['agent_path'])].filter((k): k is string => k !== undefined);
  for (const { o } of parent.records) {
    const p = payload(o);
    if (p['type'] === 'function_call_output') {
      const out = obj(parseJson(str(p['output'])));
      if (keys.includes(str(out?.['agent_id']) ?? '') || keys.includes(str(out?.['task_name']) ?? ''))
        return str(p['call_id']);
    }
    if (p['type'] === 'collab_agent_spawn_end' && p['new_thread_id'] === child.threadId) return str(p['call_id']);
  }
  return undefined;
}

/** What every Codex rollout among `files` should give. */
export function codexExpectations(files: readonly ReadFile[]): ExpectedRun[] {
  const rollouts: Rollout[] = [];
  for (const file of files) {
    const records = file.lines.flatMap((l) => (obj(l.value) !== undefined ? [{ n: l.n, o: obj(l.value) as Obj }] : []));
    const meta = records[0]?.o['type'] === 'session_meta' ? payload(records[0].o) : undefined;
    const threadId = str(meta?.['id']);
    if (meta === undefined || threadId === undefined) continue;
    const sub = obj(obj(meta['source'])?.['subagent']);
    const spawn = obj(sub?.['thread_spawn']);
    rollouts.push({ file, threadId, records, spawn, isHelper: sub !== undefined && spawn === undefined });
  }
  const byThread = new Map(rollouts.map((r) => [r.threadId, r]));
  return rollouts
    .filter((r) => !r.isHelper)
    .map((r): ExpectedRun => {
      const parentId = str(r.spawn?.['parent_thread_id']);
      const parent = parentId === undefined ? undefined : byThread.get(parentId);
      const start = ownStart(r, parent);
      const tokens = typeof start === 'number' ? tokensFrom(r.records, start) : start;
      const end = endsIn(r.records, typeof start === 'number' ? start : 1);
      const base = {
        file: r.file.path,
        format: 'codex' as const,
        runIds: [`codex:${r.threadId}`],
        outputMode: 'text' as const,
        tokens,
        ...(end !== undefined ? { endsIn: end } : {}),
      };
      if (r.spawn === undefined) return { ...base, isSubagent: false };
      let nesting: Nesting;
      let got: Received;
      if (parent === undefined) {
        nesting = {
          kind: 'unchecked',
          why: `its parent's rollout (thread ${parentId ?? '?'}) is not among the files read`,
        };
        got = { unchecked: nesting.why };
      } else {
        const call = startingCall(parent, r);
        nesting =
          call === undefined
            ? { kind: 'run', parentRunIds: [`codex:${parent.threadId}`] }
            : { kind: 'call', callId: call, parentRunIds: [`codex:${parent.threadId}`] };
        const keys = [r.threadId, str(r.spawn['agent_path'])].filter((k): k is string => k !== undefined);
        got = received(parent, keys);
      }
      return { ...base, isSubagent: true, nesting, received: got };
    });
}
