/**
 * Public API of subagent-otel: the wire vocabulary and its validators, the
 * one output-selection rule, the result contract, run tracking, the
 * telemetry that reports runs, and the backends that delegate and observe.
 * Everything here is documented at its definition; README.md has the table.
 *
 * @module subagent-otel
 */
export * from './wire/wire-error.js';
export * from './wire/content.js';
export * from './wire/events.js';
export * from './wire/jsonrpc.js';
export * from './wire/sdk-protocol.js';
export * from './wire/acp-protocol.js';
export * from './wire/capture.js';
export { LineSplitter, decodeUtf8Line, DEFAULT_MAX_LINE_BYTES, type SplitLine, type LineSplitterOptions } from './wire/ndjson.js';
export { readDurableLog, readDurableLogFile, type DurableLogRecord } from './wire/durable-log.js';
export * from './output/assistant-output.js';
export * from './output/stop-reason.js';
export * from './output/result.js';
export type * from './observe/run-record.js';
export type { Direction, FrameObserver } from './observe/frame-observer.js';
export { FrameTap, type FrameTapOptions } from './observe/frame-tap.js';
export { RunBuilder } from './observe/run-builder.js';
export { SdkTracker, type SdkTrackerOptions } from './observe/sdk-tracker.js';
export { AcpTracker, type AcpTrackerOptions } from './observe/acp-tracker.js';
export * from './observe/acp-truncation.js';
export * from './observe/acp-usage-scope.js';
export { ProtocolSniffer, protocolOfFrame, type Protocol } from './observe/protocol-sniffer.js';
export * from './telemetry/semconv.js';
export { createTelemetry, type Telemetry, type TelemetryOptions, type TelemetryShutdownReport } from './telemetry/setup.js';
export { RunTelemetry } from './telemetry/run-telemetry.js';
export { resolveContentPolicy, type ContentPolicy } from './telemetry/content-policy.js';
export { runSdkSubagent, type SdkSubagentOptions } from './backend/sdk-backend.js';
export { outcomeOf, type SubagentOutcome } from './backend/outcome.js';
export { runAcpSubagent, type AcpSubagentOptions } from './backend/acp-backend.js';
export { spawnChild, scrubbedEnv, type ChildHandle, type ExitInfo } from './backend/child-process.js';
