/**
 * Public API of subagent-otel: the wire vocabulary and its validators, the
 * one output-selection rule, the result contract, run tracking and the
 * telemetry that reports it.
 *
 * @module subagent-otel
 */
export * from './wire/wire-error.js';
export * from './wire/content.js';
export * from './wire/events.js';
export * from './wire/jsonrpc.js';
export * from './wire/sdk-protocol.js';
export * from './output/assistant-output.js';
export * from './output/stop-reason.js';
export * from './output/result.js';
export type * from './observe/run-record.js';
