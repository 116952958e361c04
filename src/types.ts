/**
 * Every public type of subagent-otel in one place: the wire vocabulary a
 * caller hands in or reads back, the result contract, the run records
 * trackers produce and listeners consume, and the options of every public
 * class and function. Each is documented at its definition; this module
 * only chooses which are public. No schema-library type is among them.
 *
 * @module subagent-otel/types
 */
export type {
  ContentBlock,
  TextBlock,
  ReasoningBlock,
  ImageBlock,
  ToolCallBlock,
  ToolResultBlock,
  UnknownBlock,
  StreamChunk,
  TokenUsage,
} from './wire/content.js';
export type { SessionEvent, KnownSessionEvent, TurnEndReason, EventParseResult } from './wire/events.js';
export type {
  JsonRpcFrame,
  JsonRpcRequest,
  JsonRpcNotification,
  JsonRpcResponse,
  FrameResult,
} from './wire/jsonrpc.js';
export type { SdkNotification, SdkNotificationResult } from './wire/sdk-protocol.js';
export type { WireError, WireErrorCode } from './wire/wire-error.js';
export type { DurableLogRecord, ReadDurableLogOptions } from './wire/durable-log.js';
export type { OutputSource } from './output/assistant-output.js';
export type { SubagentStopReason, StopReasonRule } from './output/stop-reason.js';
export type { SubagentResult, SubagentRunEndInfo, ForegroundToolResult } from './output/result.js';
export type {
  RunSource,
  RunStart,
  RunRecord,
  RunListener,
  StepRecord,
  ToolCallRecord,
  UsageTotals,
  RunRpcError,
  ToolPermission,
  UsageOrigin,
} from './observe/run-record.js';
export type {
  AcpTruncationSignature,
  AcpErrorTruncationSignature,
  AcpResultTruncationSignature,
  AcpTurnAnswer,
} from './observe/acp-truncation.js';
export type { AcpUsageScope, AcpUsageScopeEntry } from './observe/acp-usage-scope.js';
export type { Direction, FrameObserver } from './observe/frame-observer.js';
export type { DeltaLine, DeltaChunkType } from './wire/delta-line.js';
export type { FrameTapOptions, TapCounts, TapRejection } from './observe/frame-tap.js';
export type { SdkTrackerOptions } from './observe/sdk-tracker.js';
export type { AcpTrackerOptions } from './observe/acp-tracker.js';
export type {
  LogTrackerOptions,
  LogFileResult,
  LogProblem,
  LogProblemCode,
  ReadLogHooks,
} from './observe/log-tracker.js';
export type { Telemetry, TelemetryOptions, TelemetryShutdownReport } from './telemetry/setup.js';
export type { RunTelemetryOptions, TelemetrySignal } from './telemetry/run-telemetry.js';
export type { ContentPolicy } from './telemetry/content-policy.js';
export type { Environment } from './telemetry/config.js';
export type { SemconvStability } from './telemetry/semconv.js';
export type { SdkSubagentOptions } from './backend/sdk-backend.js';
export type { AcpSubagentOptions, PermissionPolicy } from './backend/acp-backend.js';
export type { SubagentOutcome } from './backend/outcome.js';
