/**
 * What an agent's own telemetry says about its model calls, and how that
 * completes a run seen on the wire. Reads gemini-cli's
 * `gemini_cli.api_response` log records (one per model call: `session.id`,
 * `role`, `finish_reasons`, token counts) and Claude Code's `api_request`
 * records (`session.id`, `query_source`, token counts; no stop reason); other
 * records are not turn reports.
 * `completeRun` is the join: the reports a run owns (its session's, after
 * the previous turn's end and up to its own: `ownerOfReport`, each report
 * given to one run only) fill what the wire lacked (a length stop becomes
 * `max-tokens`, with `subagent.stop_reason.inferred_from` naming the source;
 * tokens where the wire had none) and never overrule what the wire said.
 *
 * Pure: no I/O, no state, never throws.
 *
 * @module subagent-otel/observe/agent-turn-reports
 */
import type { RunRecord, UsageTotals } from './run-record.js';
import { attributeMap, millisOf, type OtlpJsonLogsRequest } from '../wire/otlp-json.js';

/** One model call as the agent reported it. */
export interface AgentModelCallReport {
  /** The agent's session id (gemini-cli: the ACP session id). */
  readonly sessionId: string;
  /** When the call ended (ms since the epoch). */
  readonly time: number;
  /** `main` for the agent's own loop; other roles (sub-agents, checks) are not the turn's answer. */
  readonly role: string | undefined;
  readonly finishReasons: readonly string[];
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly reasoningTokens: number;
  /** Whether `inputTokens` includes `cacheReadTokens` (Gemini's prompt count does; Anthropic's input does not). */
  readonly inputIncludesCache: boolean;
}

/** `event.name` of gemini-cli's per-call record. */
export const GEMINI_API_RESPONSE_EVENT = 'gemini_cli.api_response';
/** `event.name` of Claude Code's per-call record (scope `com.anthropic.claude_code.events`, body `claude_code.api_request`). */
export const CLAUDE_API_REQUEST_EVENT = 'api_request';
/** Claude Code's instrumentation scope: its `api_request` is matched only under it (the name alone is too generic). */
const CLAUDE_EVENTS_SCOPE = 'com.anthropic.claude_code.events';
/** Claude Code's `query_source` of the agent's own loop under the SDK (side calls: `generate_session_title`, ...). */
const CLAUDE_MAIN_SOURCES = new Set(['sdk', 'repl_main_thread']);

/** Id recorded as `subagent.stop_reason.inferred_from` for a stop learned from gemini's records. */
export const GEMINI_FINISH_REASON_SOURCE = 'agent-telemetry:gemini_cli.api_response.finish_reasons';

/** Finish reasons that mean the output-token limit (OTel's `length`, Gemini's own `MAX_TOKENS`). */
const LENGTH_STOPS = new Set(['length', 'max_tokens', 'MAX_TOKENS']);

/**
 * Slack on a run's window when the session's other runs are not known
 * ({@link reportsOfRun} without windows): the agent's clock stamp and ours
 * are read on one machine.
 */
const WINDOW_SLACK_MS = 50;

function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

/**
 * The model-call reports in one OTLP logs request: gemini-cli's
 * `api_response` records and Claude Code's `api_request` records that name a
 * session. @returns them in the order sent.
 */
export function modelCallReports(request: OtlpJsonLogsRequest): AgentModelCallReport[] {
  const out: AgentModelCallReport[] = [];
  for (const resourceLogs of request.resourceLogs ?? []) {
    for (const scope of resourceLogs.scopeLogs ?? []) {
      const scopeName = (scope as { scope?: { name?: unknown } }).scope?.name;
      for (const record of scope.logRecords ?? []) {
        const attrs = attributeMap(record.attributes);
        const event = attrs.get('event.name');
        const gemini = event === GEMINI_API_RESPONSE_EVENT;
        const claude = event === CLAUDE_API_REQUEST_EVENT && scopeName === CLAUDE_EVENTS_SCOPE;
        if (!gemini && !claude) continue;
        const sessionId = attrs.get('session.id');
        if (typeof sessionId !== 'string' || sessionId === '') continue;
        const stamp = attrs.get('event.timestamp');
        const time =
          (typeof stamp === 'string' ? Date.parse(stamp) : NaN) ||
          millisOf(record.timeUnixNano) ||
          millisOf(record.observedTimeUnixNano);
        if (time === undefined || !Number.isFinite(time)) continue;
        if (gemini) {
          const reasons = attrs.get('finish_reasons');
          const role = attrs.get('role');
          out.push({
            sessionId,
            time,
            role: typeof role === 'string' ? role : undefined,
            finishReasons: Array.isArray(reasons)
              ? reasons.filter((r): r is string => typeof r === 'string')
              : typeof reasons === 'string'
                ? [reasons]
                : [],
            inputTokens: count(attrs.get('input_token_count')),
            outputTokens: count(attrs.get('output_token_count')),
            cacheReadTokens: count(attrs.get('cached_content_token_count')),
            reasoningTokens: count(attrs.get('thoughts_token_count')),
            inputIncludesCache: true,
          });
        } else {
          const source = attrs.get('query_source');
          out.push({
            sessionId,
            time,
            role:
              typeof source === 'string' && CLAUDE_MAIN_SOURCES.has(source)
                ? 'main'
                : typeof source === 'string'
                  ? source
                  : undefined,
            // Claude Code reports no stop reason per call; its output limit is on the wire (data.errorKind).
            finishReasons: [],
            inputTokens: count(attrs.get('input_tokens')),
            outputTokens: count(attrs.get('output_tokens')),
            cacheReadTokens: count(attrs.get('cache_read_tokens')),
            reasoningTokens: 0,
            inputIncludesCache: false,
          });
        }
      }
    }
  }
  return out;
}

/** A run's place in time within its session, for giving each report to exactly one run. */
export interface TurnWindow {
  readonly runId: string;
  readonly sessionId: string | undefined;
  readonly startTime: number;
  /** Unset while the run is open. */
  readonly endTime?: number | undefined;
}

/**
 * The times whose reports a run owns among its session's runs: after the end
 * of the session's previous run (exclusive), up to its own end (inclusive; no
 * bound while it is open). Only end stamps bound it, because of what they
 * are: the proxy stamps a frame after forwarding it, and a turn's calls are
 * made, and recorded, before the agent writes the turn's answer, so each
 * record is earlier than its turn's end stamp and later than the previous
 * turn's (the next prompt is read only after that stamp was taken). A start
 * stamp can come after the turn's first call: a proxy descheduled between
 * forwarding the prompt and stamping it (a loaded machine) stamps late, while
 * the agent already works on the prompt.
 */
function ownedSpan(
  windows: readonly TurnWindow[],
  index: number,
  until: number | undefined,
): { after: number; until: number } {
  const run = windows[index]!;
  let previous: TurnWindow | undefined;
  for (let i = index - 1; i >= 0 && previous === undefined; i -= 1)
    if (windows[i]!.sessionId === run.sessionId) previous = windows[i];
  return { after: previous === undefined ? -Infinity : (previous.endTime ?? run.startTime), until: until ?? Infinity };
}

/**
 * The run a report belongs to among `windows` (runs in the order they
 * started; other sessions' are passed over): the one of its session whose
 * owned span holds its time, see {@link ownedSpan}. At a boundary shared by
 * two consecutive turns (the same millisecond) the earlier one.
 * @returns the run id, or `undefined` when the time is after the end of the session's last run, or no run is of its session.
 */
export function ownerOfReport(
  report: Pick<AgentModelCallReport, 'sessionId' | 'time'>,
  windows: readonly TurnWindow[],
): string | undefined {
  for (const [index, w] of windows.entries()) {
    if (w.sessionId !== report.sessionId) continue;
    const span = ownedSpan(windows, index, w.endTime);
    if (report.time > span.after && report.time <= span.until) return w.runId;
  }
  return undefined;
}

/**
 * The main-loop reports of a run, oldest first. With `windows` holding the
 * run's own (runs in the order they started), the reports in the span it owns
 * ({@link ownerOfReport}), so that a late record of one turn never completes
 * its neighbour; otherwise those of its session within its window and
 * {@link WINDOW_SLACK_MS}.
 */
export function reportsOfRun(
  record: Pick<RunRecord, 'runId' | 'sessionId' | 'startTime' | 'endTime'>,
  reports: readonly AgentModelCallReport[],
  windows?: readonly TurnWindow[],
): AgentModelCallReport[] {
  const index = windows?.findIndex((w) => w.runId === record.runId) ?? -1;
  const span =
    windows !== undefined && index !== -1
      ? ownedSpan(windows, index, windows[index]!.endTime ?? record.endTime)
      : { after: record.startTime - WINDOW_SLACK_MS - 1, until: record.endTime + WINDOW_SLACK_MS };
  return reports
    .filter((r) => r.sessionId === record.sessionId && r.role === 'main' && r.time > span.after && r.time <= span.until)
    .sort((a, b) => a.time - b.time);
}

/** How a run's own telemetry was joined: `joined` (reports of the run came), `none` (none came within the wait). */
export type AgentTelemetryJoin = 'joined' | 'none';

/**
 * A run completed from its reports.
 * - stop reason: a run the wire ended as `completed` whose last main call
 *   stopped at the length limit becomes `max-tokens`, inferred from
 *   {@link GEMINI_FINISH_REASON_SOURCE}; any other wire stop reason stands;
 * - usage: the sums of the main calls, only when the wire reported none.
 *
 * `windows`: as in {@link reportsOfRun}.
 * @returns the record (a new object) and how it was joined.
 */
export function completeRun(
  record: RunRecord,
  reports: readonly AgentModelCallReport[],
  windows?: readonly TurnWindow[],
): { record: RunRecord; join: AgentTelemetryJoin } {
  const mine = reportsOfRun(record, reports, windows);
  const last = mine.at(-1);
  if (last === undefined) return { record: { ...record, agentTelemetry: 'none' }, join: 'none' };
  let out: RunRecord = record;
  if (record.stopReason === 'completed' && last.finishReasons.some((reason) => LENGTH_STOPS.has(reason))) {
    out = { ...out, stopReason: 'max-tokens', stopReasonInferredFrom: GEMINI_FINISH_REASON_SOURCE };
  }
  if (!record.usage.reported) {
    const usage: UsageTotals = {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: true,
    };
    for (const r of mine) {
      // Gemini's prompt count includes the cached part; the totals keep them disjoint.
      usage.inputTokens += r.inputIncludesCache ? Math.max(0, r.inputTokens - r.cacheReadTokens) : r.inputTokens;
      usage.outputTokens += r.outputTokens;
      usage.cacheReadTokens += r.cacheReadTokens;
      usage.reasoningTokens += r.reasoningTokens;
    }
    out = { ...out, usage, usageOrigin: 'agent-telemetry' };
  }
  return { record: { ...out, agentTelemetry: 'joined' }, join: 'joined' };
}
