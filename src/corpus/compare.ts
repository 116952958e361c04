/**
 * Compares a run's output with what its parent received, after the
 * normalisations docs/TRANSCRIPTS.md lists one by one ("The corpus check"):
 *
 * 1. line ends: `\r\n` read as `\n`;
 * 2. trailing whitespace of each line, and blank lines at either end, dropped;
 * 3. (Claude Code, before this function) the `agentId: …` trailer and its
 *    `<usage>` block cut from the tool result;
 * 4. the altered report of Claude Code 2.1.210 and later: backslashes
 *    escaped (`\\` read as `\`);
 * 5. the same: one marker line inserted (a received text with exactly one
 *    line more, equal without it; the line is named);
 * 6. the hand-back frame of Claude Code 2.1.3xx: a received text that starts
 *    `[Subagent hand-back]` is read from after `The report follows:`, each
 *    line's two-space indent taken off;
 * 7. Claude Code 2.1.210+ flagged reports: a first line starting
 *    `[harness: subagent output matched instruction-shaped pattern(s):`
 *    dropped, and the backslash the scanner put after a control tag's `<`
 *    and in `Human\:` / `Assistant\:` taken out;
 * 8. a report cut by the hand-back review ends where
 *    `[harness: the subagent's report was cut from` starts (then it is a
 *    cut report, below).
 *
 * A received text that is a strict prefix of the output (after the above)
 * is a cut report: never equal, both lengths recorded.
 *
 * @module subagent-otel/corpus/compare
 */
import { arr, obj, str, type Obj } from './records.js';

/** The verdict of one comparison. */
export interface Comparison {
  readonly equal: boolean;
  /** The normalisations 4 and 5 that were needed, in words (1-3 are always applied). */
  readonly applied: readonly string[];
  /** Why not equal: a cut (both lengths) or where the texts first differ. */
  readonly detail?: string;
}

/** Normalisations 1 and 2. */
export function normaliseText(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((l) => l.replace(/[ \t]+$/, ''))
    .join('\n')
    .replace(/^\n+/, '')
    .replace(/\n+$/, '');
}

function withoutOneLine(received: string, output: string): string | undefined {
  const r = received.split('\n');
  const o = output.split('\n');
  if (r.length !== o.length + 1) return undefined;
  let i = 0;
  while (i < o.length && r[i] === o[i]) i += 1;
  const rest = [...r.slice(0, i), ...r.slice(i + 1)];
  return rest.join('\n') === output ? r[i] : undefined;
}

/** Normalisations 7 and 8; `undefined` when the text has none of their marks. */
function withoutHarnessMarks(received: string): string | undefined {
  let text = received;
  if (text.startsWith('[harness: subagent output matched instruction-shaped pattern(s):')) {
    const newline = text.indexOf('\n');
    text = newline === -1 ? '' : text.slice(newline + 1);
  }
  const cut = text.indexOf("[harness: the subagent's report was cut from");
  if (cut !== -1) text = text.slice(0, cut);
  text = text.replace(/<\\(\/?[A-Za-z])/g, '<$1').replace(/\b(Human|Assistant)\\:/g, '$1:');
  return text === received ? undefined : text;
}

/** Normalisation 6: the report inside a 2.1.3xx hand-back frame, unindented; `undefined` without the frame. */
function withoutHandBackFrame(received: string): string | undefined {
  if (!received.startsWith('[Subagent hand-back]')) return undefined;
  const marker = 'The report follows:\n';
  const at = received.indexOf(marker);
  if (at === -1) return undefined;
  return received
    .slice(at + marker.length)
    .split('\n')
    .map((line) => (line.startsWith('  ') ? line.slice(2) : line))
    .join('\n');
}

/** Compares `output` (the run's) with `received` (the parent's), normalised as above. */
export function compareReport(output: string, received: string): Comparison {
  const out = normaliseText(output);
  const framed = withoutHandBackFrame(received);
  const unflagged = withoutHarnessMarks(framed ?? received);
  const rec = normaliseText(unflagged ?? framed ?? received);
  const frame = [
    ...(framed !== undefined ? ['the hand-back frame removed'] : []),
    ...(unflagged !== undefined ? ['the harness marker or cut note removed, neutralised tags restored'] : []),
  ];
  if (out === rec) return { equal: true, applied: frame };
  const unescaped = rec.replace(/\\\\/g, '\\');
  for (const [candidate, applied] of [
    [rec, []],
    [unescaped, ['backslashes escaped']],
  ] as const) {
    if (candidate === out) return { equal: true, applied: [...frame, ...applied] };
    const marker = withoutOneLine(candidate, out);
    if (marker !== undefined)
      return { equal: true, applied: [...frame, ...applied, `a marker line inserted ("${marker.slice(0, 60)}")`] };
  }
  for (const candidate of [rec, unescaped]) {
    if (candidate.length < out.length && out.startsWith(candidate)) {
      return {
        equal: false,
        applied: [],
        detail: `a cut report: the parent received ${candidate.length} of the output's ${out.length} characters`,
      };
    }
  }
  let at = 0;
  while (at < out.length && at < rec.length && out[at] === rec[at]) at += 1;
  return {
    equal: false,
    applied: [],
    detail: `the output (${out.length} characters) and what the parent received (${rec.length}) differ from character ${at}: ${JSON.stringify(out.slice(at, at + 40))} vs ${JSON.stringify(rec.slice(at, at + 40))}`,
  };
}

/**
 * The text of a run's output blocks (`subagent.output`): its text blocks
 * joined with a newline; for `gemini-answer`, the `result` argument of its
 * last `complete_task` call when it has one (what a Gemini CLI subagent
 * hands over), else the same text.
 */
export function outputText(blocks: readonly Obj[] | undefined, mode: 'text' | 'gemini-answer'): string {
  if (blocks === undefined) return '';
  if (mode === 'gemini-answer') {
    const call = [...blocks].reverse().find((b) => b['type'] === 'tool-call' && b['name'] === 'complete_task');
    if (call !== undefined) {
      let args: unknown;
      try {
        args = typeof call['arguments'] === 'string' ? JSON.parse(call['arguments']) : call['arguments'];
      } catch {
        args = undefined; // arguments that are not JSON hand over no answer: the text is compared
      }
      const result = obj(args)?.['result'];
      if (typeof result === 'string') return result;
      if (result !== undefined) return JSON.stringify(result, null, 2);
    }
  }
  return arr(blocks)
    .flatMap((b) =>
      obj(b)?.['type'] === 'text' && str(obj(b)?.['text']) !== undefined ? [str(obj(b)?.['text']) as string] : [],
    )
    .join('\n');
}
