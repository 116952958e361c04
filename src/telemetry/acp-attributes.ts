/**
 * The ACP-specific attributes of run and tool spans: how the stop reason was
 * inferred, the agent's JSON-RPC failure (code, and its text bounded and
 * through the content policy's redaction hook), where usage came from, the
 * context window and cumulative session cost of `usage_update`, and per tool
 * the ACP kind, title and permission outcome. Also the run span's status
 * description. Reads only `RunRecord` fields; the fields are absent for
 * other sources, so these functions add nothing for them. Also the run's
 * diagnostic as telemetry may record it, for runs of any source.
 *
 * @module subagent-otel/telemetry/acp-attributes
 */
import type { Attributes } from '@opentelemetry/api';
import type { RunRecord, ToolCallRecord } from '../observe/run-record.js';
import { DIAGNOSTIC_MAX_BYTES } from '../output/result.js';
import { TRUNCATION_MARKER, type ContentPolicy } from './content-policy.js';
import { describeError, OnceReporter } from './report-once.js';
import {
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_SUBAGENT_CONTEXT_WINDOW_SIZE,
  ATTR_SUBAGENT_CONTEXT_WINDOW_USED,
  ATTR_SUBAGENT_DIAGNOSTIC,
  ATTR_SUBAGENT_ERROR_CODE,
  ATTR_SUBAGENT_ERROR_MESSAGE,
  ATTR_SUBAGENT_SESSION_CUMULATIVE_COST_AMOUNT,
  ATTR_SUBAGENT_SESSION_CUMULATIVE_COST_CURRENCY,
  ATTR_SUBAGENT_SESSION_CUMULATIVE_INPUT_TOKENS,
  ATTR_SUBAGENT_SESSION_CUMULATIVE_OUTPUT_TOKENS,
  ATTR_SUBAGENT_STOP_REASON_INFERRED_FROM,
  ATTR_SUBAGENT_TOOL_PERMISSION_OPTION_ID,
  ATTR_SUBAGENT_TOOL_PERMISSION_OUTCOME,
  ATTR_SUBAGENT_TOOL_TITLE,
  ATTR_SUBAGENT_USAGE_ORIGIN,
  ATTR_SUBAGENT_AGENT_TELEMETRY,
} from './semconv.js';

/** Longest `subagent.error.message` (UTF-16 code units, marker included), whatever the content policy allows. */
export const ERROR_MESSAGE_MAX_LENGTH = 1024;

const reports = new OnceReporter();

/** `text` within `limit` code units: a prefix plus `TRUNCATION_MARKER` when longer; never ends inside a surrogate pair. */
function capText(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = Math.max(0, limit - TRUNCATION_MARKER.length);
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}${TRUNCATION_MARKER}`.slice(0, limit);
}

/** Longest `subagent.tool.title` (UTF-16 code units, marker included), whatever the content policy allows. */
export const TOOL_TITLE_MAX_LENGTH = 256;

/**
 * A text an agent wrote about the conversation (an error message, a tool
 * call's title: both can quote it, a title is often a command line) as
 * telemetry may record it. With capture off: `undefined`. Otherwise the text
 * goes through `policy.redact` as the JSON of one text block
 * (`[{"type":"text","text":...}]`, the hook's usual input shape), the text
 * blocks of its answer are joined, and the result is capped to the smaller of
 * `policy.maxLength` and `limit`. A hook that throws or answers anything but a
 * JSON array gives `undefined` (reported once through the diag logger, naming
 * `what`). Never throws.
 */
function recordableText(text: string, policy: ContentPolicy, limit: number, what: string): string | undefined {
  if (!policy.capture) return undefined;
  let recorded = text;
  if (policy.redact !== undefined) {
    try {
      const answer: unknown = policy.redact(JSON.stringify([{ type: 'text', text }]));
      if (typeof answer !== 'string') throw new TypeError(`redact returned ${typeof answer}, not a string`);
      const blocks: unknown = JSON.parse(answer);
      if (!Array.isArray(blocks)) throw new TypeError('redact returned JSON that is not an array of blocks');
      recorded = blocks
        .map((block: unknown) =>
          block !== null && typeof block === 'object' && typeof (block as { text?: unknown }).text === 'string'
            ? (block as { text: string }).text
            : '',
        )
        .join('');
    } catch (error) {
      reports.report(
        'warn',
        `redact-${what}:${describeError(error)}`,
        `content redaction hook failed on ${what} (${describeError(error)}); left out of telemetry`,
      );
      return undefined;
    }
  }
  return capText(recorded, Math.min(policy.maxLength ?? limit, limit));
}

/**
 * An error text as telemetry may record it (`subagent.error.message`):
 * `recordableText` within {@link ERROR_MESSAGE_MAX_LENGTH}. With capture off,
 * or when the redaction hook fails, `undefined`. Never throws.
 */
export function recordableErrorMessage(text: string, policy: ContentPolicy): string | undefined {
  return recordableText(text, policy, ERROR_MESSAGE_MAX_LENGTH, 'an error message');
}

/**
 * The run's diagnostic on its span: `subagent.diagnostic` (the text of
 * `SubagentResult.diagnostic` through `recordableText`, within
 * `DIAGNOSTIC_MAX_BYTES` code units, so a result's diagnostic fits whole
 * unless the policy caps it) and, for the status description of a run
 * without a JSON-RPC error (whose text is said there already), the same
 * text within {@link ERROR_MESSAGE_MAX_LENGTH}. With capture off, a failing
 * hook or no diagnostic: nothing. Never throws.
 */
export function diagnosticAttributes(
  record: RunRecord,
  policy: ContentPolicy,
): { attributes: Attributes; statusSuffix?: string } {
  if (record.diagnostic === undefined || record.diagnostic === '') return { attributes: {} };
  const text = recordableText(record.diagnostic, policy, DIAGNOSTIC_MAX_BYTES, 'a diagnostic');
  if (text === undefined || text === '') return { attributes: {} };
  const attributes: Attributes = { [ATTR_SUBAGENT_DIAGNOSTIC]: text };
  if (record.rpcError !== undefined) return { attributes };
  return { attributes, statusSuffix: capText(text, ERROR_MESSAGE_MAX_LENGTH) };
}

/**
 * The ACP attributes of a run span and its status description.
 * @returns `attributes` (empty for runs without ACP fields) and
 *   `statusDescription`: `stop reason: <reason>`, followed by
 *   `; JSON-RPC error <code>` and `: <message>` when the agent answered a
 *   failure and its message may be recorded. Never throws.
 */
export function acpRunAttributes(
  record: RunRecord,
  policy: ContentPolicy,
): { attributes: Attributes; statusDescription: string } {
  const attributes: Attributes = {};
  let statusDescription = `stop reason: ${record.stopReason}`;
  if (record.stopReasonInferredFrom !== undefined)
    attributes[ATTR_SUBAGENT_STOP_REASON_INFERRED_FROM] = record.stopReasonInferredFrom;
  if (record.rpcError !== undefined) {
    attributes[ATTR_SUBAGENT_ERROR_CODE] = record.rpcError.code;
    statusDescription += `; JSON-RPC error ${record.rpcError.code}`;
    const message = recordableErrorMessage(record.rpcError.message, policy);
    if (message !== undefined && message !== '') {
      attributes[ATTR_SUBAGENT_ERROR_MESSAGE] = message;
      statusDescription += `: ${message}`;
    }
  }
  if (record.usageOrigin !== undefined && record.usage.reported)
    attributes[ATTR_SUBAGENT_USAGE_ORIGIN] = record.usageOrigin;
  if (record.agentTelemetry !== undefined) attributes[ATTR_SUBAGENT_AGENT_TELEMETRY] = record.agentTelemetry;
  if (record.sessionUsageTotals !== undefined) {
    attributes[ATTR_SUBAGENT_SESSION_CUMULATIVE_INPUT_TOKENS] = record.sessionUsageTotals.inputTokens;
    attributes[ATTR_SUBAGENT_SESSION_CUMULATIVE_OUTPUT_TOKENS] = record.sessionUsageTotals.outputTokens;
  }
  if (record.contextWindow !== undefined) {
    attributes[ATTR_SUBAGENT_CONTEXT_WINDOW_USED] = record.contextWindow.used;
    attributes[ATTR_SUBAGENT_CONTEXT_WINDOW_SIZE] = record.contextWindow.size;
  }
  if (record.sessionCost !== undefined) {
    attributes[ATTR_SUBAGENT_SESSION_CUMULATIVE_COST_AMOUNT] = record.sessionCost.amount;
    attributes[ATTR_SUBAGENT_SESSION_CUMULATIVE_COST_CURRENCY] = record.sessionCost.currency;
  }
  return { attributes, statusDescription };
}

/**
 * The ACP attributes of a tool span: `gen_ai.tool.type` (ACP kind), the
 * permission outcome and option, and the title as content: only with capture
 * on, through the redaction hook, within {@link TOOL_TITLE_MAX_LENGTH} (a
 * title is often a command line, which can carry secrets). Never throws.
 */
export function acpToolAttributes(call: ToolCallRecord, policy: ContentPolicy): Attributes {
  const attributes: Attributes = {};
  if (call.toolType !== undefined && call.toolType !== '') attributes[ATTR_GEN_AI_TOOL_TYPE] = call.toolType;
  const title =
    call.title !== undefined && call.title !== ''
      ? recordableText(call.title, policy, TOOL_TITLE_MAX_LENGTH, 'a tool title')
      : undefined;
  if (title !== undefined && title !== '') attributes[ATTR_SUBAGENT_TOOL_TITLE] = title;
  if (call.permission !== undefined) {
    attributes[ATTR_SUBAGENT_TOOL_PERMISSION_OUTCOME] = call.permission.outcome;
    if (call.permission.optionId !== undefined)
      attributes[ATTR_SUBAGENT_TOOL_PERMISSION_OPTION_ID] = call.permission.optionId;
  }
  return attributes;
}
