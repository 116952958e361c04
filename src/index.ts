/**
 * Public API of subagent-otel, every name chosen on purpose (named exports
 * only; `test/api.test.ts` lists them): the one output-selection rule and the
 * result contract, validators for the wire frames a caller hands in, the
 * trackers that turn streams and durable logs into runs, the telemetry that
 * reports runs (as an instrumentation inside a host SDK, or standalone), the
 * backends that delegate and observe, and the telemetry names. Public types
 * are in `types.ts`. docs/API.md has the table.
 *
 * @module subagent-otel
 */

// The one rule and the result contract.
export { AssistantOutputFold, finalAssistantOutput } from './output/assistant-output.js';
export {
  readResult,
  splitEpochs,
  subagentResult,
  subagentRunEndInfo,
  foregroundToolResult,
  reportedOutputMatches,
} from './output/result.js';
export {
  sdkStopReason,
  inProcessStopReason,
  epochStopReason,
  stopReasonOfEvents,
  stopReasonFromAcp,
} from './output/stop-reason.js';

// Validating what a caller hands in.
export { parseFrame } from './wire/jsonrpc.js';
export { parseSessionEvent } from './wire/events.js';
export { parseSdkNotification } from './wire/sdk-protocol.js';
export { readDurableLog, readDurableLogFile } from './wire/durable-log.js';

// Observation: streams and logs to runs.
export { SdkTracker } from './observe/sdk-tracker.js';
export { AcpTracker } from './observe/acp-tracker.js';
export { LogTracker } from './observe/log-tracker.js';
export { FrameTap } from './observe/frame-tap.js';
export { ACP_TRUNCATION_SIGNATURES, ACP_TRUNCATION_TABLE_VERSION, matchTruncation } from './observe/acp-truncation.js';
export { ACP_USAGE_SCOPES, ACP_USAGE_SCOPE_TABLE_VERSION } from './observe/acp-usage-scope.js';

// Telemetry.
export { RunTelemetry } from './telemetry/run-telemetry.js';
export { createTelemetry } from './telemetry/setup.js';
export { resolveContentPolicy } from './telemetry/content-policy.js';
export * as semconv from './telemetry/semconv.js';

// Backends: delegate and observe in one call.
export { runSdkSubagent } from './backend/sdk-backend.js';
export { runAcpSubagent } from './backend/acp-backend.js';
export { outcomeOf } from './backend/outcome.js';

// Public types: the one list is types.ts.
export type * from './types.js';
