/**
 * Tells, without the project's readers, whether a file holds records of
 * Claude Code, Codex or Gemini CLI: the first record anywhere in the file
 * that has one of their shapes decides (not line 1: a file whose first
 * record is of a type nobody knows yet is still theirs). The shapes are the
 * envelopes, not the record types, so new record types are recognised:
 *
 * - Claude Code: an object with a string `type` and a string `sessionId`
 *   and no `payload` (every line of a session or subagent file: `user`,
 *   `assistant`, `system`, `progress`, `permission-mode`, `queue-operation`,
 *   …), or a `summary` / `file-history-snapshot` record; a
 *   `agent-<id>.meta.json` sidecar (`agentType`).
 * - Codex: `{timestamp, type, payload}` with `type` one of `session_meta`,
 *   `response_item`, `event_msg`, `turn_context`, `compacted`.
 * - Gemini CLI: a recording's metadata (`sessionId` and `projectHash`), a
 *   message record (`id`, `timestamp`, `type` one of `user`, `gemini`,
 *   `info`, `error`, `warning`), a `$set` / `$rewindTo` record, a legacy
 *   document (`sessionId` and a `messages` array), or an activity-log line
 *   (`sessionId`, `type`, a `payload` object, a numeric `timestamp`).
 *
 * @module subagent-otel/corpus/sniff
 */
import type { Format, SniffedFile } from './facts.js';
import { arr, obj, str, type ReadFile } from './records.js';

const CODEX_TYPES = new Set(['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted']);
const GEMINI_MESSAGE_TYPES = new Set(['user', 'gemini', 'info', 'error', 'warning']);

/** The format one JSON value has, with a short description, or undefined. */
export function recordFormat(value: unknown): { format: Format; what: string } | undefined {
  const o = obj(value);
  if (o === undefined) return undefined;
  const type = str(o['type']);
  if (type !== undefined && CODEX_TYPES.has(type) && obj(o['payload']) !== undefined)
    return { format: 'codex', what: `a Codex "${type}" record` };
  if (str(o['sessionId']) !== undefined && str(o['projectHash']) !== undefined) {
    return {
      format: 'gemini-cli',
      what: Array.isArray(o['messages']) ? 'a Gemini CLI chat document' : 'a Gemini CLI recording metadata record',
    };
  }
  if (str(o['sessionId']) !== undefined && Array.isArray(o['messages']))
    return { format: 'gemini-cli', what: 'a Gemini CLI chat document' };
  if (
    type !== undefined &&
    str(o['sessionId']) !== undefined &&
    obj(o['payload']) !== undefined &&
    typeof o['timestamp'] === 'number'
  ) {
    return { format: 'gemini-cli', what: `a Gemini CLI activity-log "${type}" record` };
  }
  if (type !== undefined && str(o['sessionId']) !== undefined && !('payload' in o))
    return { format: 'claude-code', what: `a Claude Code "${type}" record` };
  if (type === 'summary' || type === 'file-history-snapshot')
    return { format: 'claude-code', what: `a Claude Code "${type}" record` };
  if (str(o['agentType']) !== undefined) return { format: 'claude-code', what: 'a Claude Code subagent sidecar' };
  if (
    type !== undefined &&
    GEMINI_MESSAGE_TYPES.has(type) &&
    str(o['id']) !== undefined &&
    str(o['timestamp']) !== undefined
  ) {
    return { format: 'gemini-cli', what: `a Gemini CLI "${type}" message record` };
  }
  if ('$set' in o || '$rewindTo' in o) return { format: 'gemini-cli', what: 'a Gemini CLI update record' };
  return undefined;
}

/** The first record of `file` that identifies a format, or what the file held instead. */
export function sniff(file: ReadFile): SniffedFile {
  let parsed = 0;
  for (const line of file.lines) {
    if (line.value === undefined) continue;
    parsed += 1;
    const found = recordFormat(line.value);
    if (found !== undefined)
      return { file: file.path, format: found.format, evidence: `line ${line.n}: ${found.what}` };
  }
  const first = file.lines.find((l) => l.value !== undefined)?.value;
  const keys =
    obj(first) !== undefined
      ? Object.keys(obj(first) ?? {})
          .slice(0, 6)
          .join(', ')
      : Array.isArray(first)
        ? `an array of ${arr(first).length}`
        : typeof first;
  return {
    file: file.path,
    format: undefined,
    evidence:
      parsed === 0
        ? `no line is JSON (${file.lines.length} lines)`
        : `${parsed} JSON records, none of a known shape (first: ${keys})`,
  };
}
