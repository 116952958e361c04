/**
 * What `watch` reports of a run whose files grew after it was reported (a
 * Claude Code session taken up again after its idle close, a Codex thread
 * given another turn, a subagent resumed): the run's later part, as a run of
 * its own that continues the first, so that everything the files hold is
 * reported once and nothing twice. Also what the checkpoint remembers of a
 * reported run to tell that part apart. Pure functions.
 *
 * @module subagent-otel/watch/continuation
 */
import { createHash } from 'node:crypto';
import { addUsage, emptyUsage } from '../observe/run-builder.js';
import type { RunRecord, UsageTotals } from '../observe/run-record.js';
import type { ContentBlock } from '../wire/content.js';

/** What the checkpoint keeps of a reported run. */
export interface ReportedRun {
  /** The run's end (epoch ms) as last reported: its later part is what the files hold after it. */
  readonly end: number;
  /** {@link outputDigest} of the output last reported; absent in checkpoints written before it was kept. */
  readonly output?: string;
  /** Empty assistant messages counted so far. */
  readonly emptyMessages?: number;
}

/** A short SHA-256 (32 hex characters) of an output's JSON, `[]` for none: tells whether the selection changed. Pure. */
export function outputDigest(output: readonly ContentBlock[] | undefined): string {
  return createHash('sha256')
    .update(JSON.stringify(output ?? []))
    .digest('hex')
    .slice(0, 32);
}

/** What the checkpoint remembers of `record` once it is reported. Pure. */
export function reportedRunOf(record: RunRecord): ReportedRun {
  return { end: record.endTime, output: outputDigest(record.output), emptyMessages: record.emptyMessages };
}

/** The run id of the part of `runId` after `end`: `<runId>@<end as ISO 8601>`, the same on every read. Pure. */
export function continuationRunId(runId: string, end: number): string {
  return `${runId}@${new Date(end).toISOString()}`;
}

/**
 * The part of `record` (the whole run, as its files hold it now) after what
 * was reported of it (`previous`):
 * - id {@link continuationRunId}, `continuesRunId` the run's own id; same
 *   session, trace, parent and agent;
 * - the model calls and tool calls that started after `previous.end`, the
 *   usage the sum of those calls' (the transcript readers' run usage is the
 *   sum of its calls'), started at the first of them;
 * - the output by the rule over the whole run when that selection changed
 *   (the last non-empty message is then a later one), else none; the
 *   parent's report with it; the stop reason and diagnostic as the run ends
 *   now; no prompt (the run's first message is the first part's).
 *
 * @returns `undefined` when the files hold nothing new that would be
 *   reported: no later call, no later tool call and the same output (a line
 *   of bookkeeping written after the run). Never throws.
 */
export function laterPart(record: RunRecord, previous: ReportedRun): RunRecord | undefined {
  const steps = record.steps.filter((step) => step.startTime > previous.end);
  const toolCalls = record.toolCalls.filter((call) => call.startTime > previous.end);
  const outputIsNew = previous.output === undefined || previous.output !== outputDigest(record.output);
  if (steps.length === 0 && toolCalls.length === 0 && !outputIsNew) return undefined;
  const { prompt: _prompt, reported, cost: _cost, sessionTotalCost: _sessionTotalCost, ...rest } = record;
  const startTime = Math.min(
    record.endTime,
    ...steps.map((step) => step.startTime),
    ...toolCalls.map((call) => call.startTime),
  );
  return {
    ...rest,
    runId: continuationRunId(record.runId, previous.end),
    continuesRunId: record.runId,
    startTime,
    steps,
    toolCalls,
    usage: usageOfCalls(steps),
    output: outputIsNew ? record.output : undefined,
    outputSource: outputIsNew ? record.outputSource : 'none',
    emptyMessages: Math.max(0, record.emptyMessages - (previous.emptyMessages ?? 0)),
    ...(outputIsNew && reported !== undefined ? { reported } : {}),
  };
}

/** The sum of the calls' usage (the run builder's own addition); `reported` when any call reported some. */
function usageOfCalls(steps: RunRecord['steps']): UsageTotals {
  const totals = emptyUsage();
  for (const { usage } of steps) if (usage !== undefined) addUsage(totals, usage);
  return totals;
}
