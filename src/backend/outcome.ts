/**
 * What a delegated run produced, in every shape the parent and observers
 * use, built from the one observed `RunRecord`: the `SubagentResult`, the
 * `subagent/end` payload and the foreground tool result. Shared by the SDK
 * and ACP backends so both shape results the same way.
 *
 * @module subagent-otel/backend/outcome
 */
import {
  foregroundToolResult,
  subagentResult,
  subagentRunEndInfo,
  type ForegroundToolResult,
  type SubagentResult,
  type SubagentRunEndInfo,
} from '../output/result.js';
import type { RunRecord } from '../observe/run-record.js';

/** What one delegated run produced; every field describes the same run. */
export interface SubagentOutcome {
  /** What the parent receives. */
  readonly result: SubagentResult;
  /** The `subagent/end` payload. */
  readonly runEnd: SubagentRunEndInfo;
  /** The foreground delegation tool result. */
  readonly toolResult: ForegroundToolResult;
  /** The run as observed (the record the listener received). */
  readonly record: RunRecord;
}

/**
 * Shapes a record into an outcome. `provider` and `id` identify the run in
 * the `subagent/end` payload. Pure; never throws.
 */
export function outcomeOf(
  record: RunRecord,
  identity: { readonly provider: string; readonly id: string },
): SubagentOutcome {
  const result = subagentResult(record.output, record.stopReason, record.diagnostic);
  return {
    result,
    runEnd: subagentRunEndInfo(
      { runId: record.runId, provider: identity.provider, id: identity.id, local: false },
      record.stopReason,
      record.output,
    ),
    toolResult: foregroundToolResult(result),
    record,
  };
}
