/**
 * Every telemetry name this project emits: span names, attribute keys,
 * attribute values, metric names and units. Source, tests, the tables of docs/TELEMETRY.md,
 * the Prometheus rules and the Grafana dashboard all refer to these constants;
 * no key is spelled anywhere else in `src/`.
 *
 * `gen_ai.*` names follow the OpenTelemetry GenAI semantic conventions
 * (status: Development; now maintained in the `semantic-conventions-genai`
 * repository). The npm `incubating` constants for them are deprecated, so the
 * ones used here are copied as plain constants. Names the conventions do not
 * cover live under `subagent.*`.
 *
 * @module subagent-otel/telemetry/semconv
 */
import type { SemconvStability } from './config.js';

/**
 * The release of the GenAI conventions whose names the default mode (`latest`)
 * emits: `semantic-conventions-genai` v0.1.0, its first standalone release
 * (on core semantic conventions v1.45.0), status Development. Decision 0121
 * lists every name that changed and the commit of the conventions' text each
 * one was checked against; the tag's own files could not be read from this
 * project's machines, so the check is against the newest stored text of
 * their main branch (migration guide at commit 32c328e8).
 */
export const GENAI_SEMCONV_VERSION = '0.1.0' as const;
/**
 * The schema URL of that release, in the form the conventions' README gives
 * (`https://opentelemetry.io/schemas/gen-ai/<version>`); not checked against
 * the tag. Not set on the tracer or meter: their scope also carries
 * core-convention names, and the previous mode would claim a schema it does
 * not follow (decision 0121).
 */
export const GENAI_SEMCONV_SCHEMA_URL = `https://opentelemetry.io/schemas/gen-ai/${GENAI_SEMCONV_VERSION}` as const;

/** Instrumentation scope name of every tracer and meter this project creates. */
export const INSTRUMENTATION_SCOPE_NAME = 'subagent-otel' as const;
/** `service.name` when neither `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` nor an option names one. */
export const DEFAULT_SERVICE_NAME = 'subagent-otel' as const;

// ---------------------------------------------------------------- gen_ai.* attributes

/** The operation; always `invoke_agent` on run spans, `chat` on step spans, `execute_tool` on tool spans. */
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name' as const;
/** Run id of the delegated run. @example `run-7f3a` */
export const ATTR_GEN_AI_AGENT_ID = 'gen_ai.agent.id' as const;
/** Provider or label of the run (low cardinality). @example `deepseek` */
export const ATTR_GEN_AI_AGENT_NAME = 'gen_ai.agent.name' as const;
/** Child session id. @example `ses_01J...` */
export const ATTR_GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id' as const;
/** Model provider, when the stream tells. @example `deepseek` */
export const ATTR_GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name' as const;
/** Requested model, when the stream tells. @example `deepseek-chat` */
export const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model' as const;
/** Input tokens, cached input included (dsh counts are disjoint and are added up). */
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens' as const;
/** Output tokens (reasoning tokens included, as the provider reports them). */
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens' as const;
/** Input tokens served from the provider cache (counted inside `gen_ai.usage.input_tokens` too). */
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = 'gen_ai.usage.cache_read.input_tokens' as const;
/** Input tokens written to the provider cache (counted inside `gen_ai.usage.input_tokens` too): v0.1.0, the default. */
export const ATTR_GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS = 'gen_ai.usage.cache_write.input_tokens' as const;
/** The same count under the previous name (`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_previous`, for one release). */
export const ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = 'gen_ai.usage.cache_creation.input_tokens' as const;
/** Output tokens spent on reasoning. */
export const ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = 'gen_ai.usage.reasoning.output_tokens' as const;
/** One entry per run or step. @example `["length"]` */
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons' as const;
/**
 * The selected output as one assistant message, JSON text of
 * `[{ role: 'assistant', parts: [...], finish_reason }]` (content policy applied).
 * The conventions now mark the per-message `finish_reason` deprecated in favour
 * of `gen_ai.response.finish_reasons`; it is still allowed and kept because
 * the contract asks for it.
 * @example `[{"role":"assistant","parts":[{"type":"text","content":"Done."}],"finish_reason":"stop"}]`
 */
export const ATTR_GEN_AI_OUTPUT_MESSAGES = 'gen_ai.output.messages' as const;
/**
 * The prompt the run was given, as GenAI input messages (JSON string on the
 * `invoke_agent` span): one `user` message whose parts are the prompt's
 * blocks. Under the same content policy as the output (capture switch,
 * length cap, redaction hook).
 * @example `[{"role":"user","parts":[{"type":"text","content":"Summarize the open issues"}]}]`
 */
export const ATTR_GEN_AI_INPUT_MESSAGES = 'gen_ai.input.messages' as const;
/** Tool name on `execute_tool` spans. */
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name' as const;
/** Tool call id on `execute_tool` spans. */
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id' as const;
/** Tool type on `execute_tool` spans: for ACP agents the tool call's `kind` verbatim. @example `execute` */
export const ATTR_GEN_AI_TOOL_TYPE = 'gen_ai.tool.type' as const;
/** Token type on `gen_ai.client.token.usage` (previous names only; removed in v0.1.0). */
export const ATTR_GEN_AI_TOKEN_TYPE = 'gen_ai.token.type' as const;
/** Token modality on the `gen_ai.client.inference.usage.*` counters (v0.1.0, the default; required). */
export const ATTR_GEN_AI_TOKEN_MODALITY = 'gen_ai.token.modality' as const;
/** Low-cardinality error class on failed runs and tools. */
export const ATTR_ERROR_TYPE = 'error.type' as const;

export const GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT = 'invoke_agent' as const;
export const GEN_AI_OPERATION_NAME_VALUE_CHAT = 'chat' as const;
export const GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL = 'execute_tool' as const;
export const GEN_AI_TOKEN_TYPE_VALUE_INPUT = 'input' as const;
export const GEN_AI_TOKEN_TYPE_VALUE_OUTPUT = 'output' as const;
/** `gen_ai.token.modality` of every count: neither dsh nor ACP says which modality its tokens were. */
export const GEN_AI_TOKEN_MODALITY_VALUE_UNKNOWN = 'unknown' as const;

/** `role` of the one message in `gen_ai.output.messages`. */
export const GEN_AI_ROLE_VALUE_ASSISTANT = 'assistant' as const;
/** `role` of the one message in `gen_ai.input.messages`. */
export const GEN_AI_ROLE_VALUE_USER = 'user' as const;
/** Part `type` for inline media of a prompt (ACP `image`/`audio` with `data`): `{ type: 'blob', modality, mime_type, content }`. */
export const GEN_AI_PART_TYPE_VALUE_BLOB = 'blob' as const;
/** Part `type` for a referenced resource of a prompt (ACP `resource_link`): `{ type: 'uri', modality, uri, mime_type? }`. */
export const GEN_AI_PART_TYPE_VALUE_URI = 'uri' as const;
/** Part `type` for a `text` block: `{ type: 'text', content }`. */
export const GEN_AI_PART_TYPE_VALUE_TEXT = 'text' as const;
/** Part `type` for a `reasoning` block: `{ type: 'reasoning', content }`. */
export const GEN_AI_PART_TYPE_VALUE_REASONING = 'reasoning' as const;
/** Part `type` for a `tool-call` block: `{ type: 'tool_call', id, name, arguments }` (arguments: the raw JSON text). */
export const GEN_AI_PART_TYPE_VALUE_TOOL_CALL = 'tool_call' as const;
/** Part `type` for a `tool-result` block: `{ type: 'tool_call_response', id, response }` (response: the block's content). */
export const GEN_AI_PART_TYPE_VALUE_TOOL_CALL_RESPONSE = 'tool_call_response' as const;

// ---------------------------------------------------------------- subagent.* attributes

/** Stop reason verbatim (`completed`, `max-tokens`, `aborted`, `error`, `refusal`, other); alerts and searches key on it. */
export const ATTR_SUBAGENT_STOP_REASON = 'subagent.stop_reason' as const;
/** The selected output: JSON of the `ContentBlock[]` exactly as in `SubagentResult.output` (content policy applies). */
export const ATTR_SUBAGENT_OUTPUT = 'subagent.output' as const;
/** Where the output came from: `message`, `stream` or `none`. */
export const ATTR_SUBAGENT_OUTPUT_SOURCE = 'subagent.output.source' as const;
/** SHA-256 (hex) of the full output JSON, before any cap; present even when capture is off. */
export const ATTR_SUBAGENT_OUTPUT_SHA256 = 'subagent.output.sha256' as const;
/** Characters of the full output JSON. */
export const ATTR_SUBAGENT_OUTPUT_LENGTH = 'subagent.output.length' as const;
/** Whether `subagent.output` was shortened by the length cap. */
export const ATTR_SUBAGENT_OUTPUT_TRUNCATED = 'subagent.output.truncated' as const;
/** Empty-content assistant messages the rule skipped. */
export const ATTR_SUBAGENT_EMPTY_MESSAGES = 'subagent.empty_messages' as const;
/** Session that delegated the run. */
export const ATTR_SUBAGENT_PARENT_SESSION_ID = 'subagent.parent.session_id' as const;
/** Run id (same value as `gen_ai.agent.id`, kept for searches across products). */
export const ATTR_SUBAGENT_RUN_ID = 'subagent.run_id' as const;
/**
 * `watch`: the run this one is the later part of (its files grew after it
 * was reported). @example `claude-code:0b5e…` (this run's id is that plus `@<ISO time>`)
 */
export const ATTR_SUBAGENT_RUN_CONTINUES = 'subagent.run.continues' as const;
/** Subagent provider that ran the child (`spawn`, from `subagent.finished` or the log's descriptor), else the run's model provider. @example `spawn` */
export const ATTR_SUBAGENT_PROVIDER = 'subagent.provider' as const;
/** Where the run was observed: `sdk`, `sdk-subagent`, `acp`, `log`. */
export const ATTR_SUBAGENT_SOURCE = 'subagent.source' as const;
/** When the runtime reported `lastAssistantMessage`: whether it equals ours. */
export const ATTR_SUBAGENT_REPORTED_OUTPUT_MATCH = 'subagent.reported_output.match' as const;
/** On a mismatch: characters of what the parent received, as compared (a report cut short shows here). @example `2500` */
export const ATTR_SUBAGENT_REPORTED_OUTPUT_LENGTH = 'subagent.reported_output.length' as const;
/** On a mismatch: characters of the selected output as compared with the report (its text, or its answer). @example `7340` */
export const ATTR_SUBAGENT_REPORTED_OUTPUT_COMPARED_LENGTH = 'subagent.reported_output.compared_length' as const;
/** Why a malformed frame was rejected (`not-json`, `invalid`, ...): metric attribute. */
export const ATTR_SUBAGENT_FRAME_ERROR = 'subagent.frame.error' as const;
/** Direction or file kind a malformed frame came from: metric attribute. */
export const ATTR_SUBAGENT_FRAME_ORIGIN = 'subagent.frame.origin' as const;
/**
 * Set only when the stop reason was inferred rather than reported: the id of
 * the truncation signature an ACP agent's answer matched (`observe/acp-truncation`).
 * @example `codex-acp/max_output_tokens@1`
 */
export const ATTR_SUBAGENT_STOP_REASON_INFERRED_FROM = 'subagent.stop_reason.inferred_from' as const;
/** JSON-RPC error code an ACP agent answered the prompt with. @example `-32603` */
export const ATTR_SUBAGENT_ERROR_CODE = 'subagent.error.code' as const;
/** That error's text (message, plus `data.message` when it says more), capped and through the content policy's redaction hook. */
export const ATTR_SUBAGENT_ERROR_MESSAGE = 'subagent.error.message' as const;
/**
 * The run's diagnostic, exactly `SubagentResult.diagnostic` (what failed: the
 * agent's exit, a synthetic API error's text, a JSON-RPC error's text),
 * through the content policy like an error message. Any source.
 * @example `agent exited with code 3`
 */
export const ATTR_SUBAGENT_DIAGNOSTIC = 'subagent.diagnostic' as const;
/**
 * Where an ACP run's token usage was read: `prompt-response` (`usage`),
 * `prompt-response-session-delta` (the difference of two session totals) or
 * `meta-quota` (`_meta.quota.token_count`).
 */
export const ATTR_SUBAGENT_USAGE_ORIGIN = 'subagent.usage.origin' as const;
/**
 * On an `invoke_agent` span: `true` when the `chat` spans below it carry the
 * same tokens, call by call (the run span's `gen_ai.usage.*` is their sum).
 * A backend summing usage over every span of a trace skips these spans, or
 * sums only `chat` spans (docs/TELEMETRY.md, decision 0071). Absent when no
 * step reported usage (the run span is then the only carrier).
 */
export const ATTR_SUBAGENT_USAGE_ROLLUP = 'subagent.usage.rollup' as const;
/** What the run's own token usage cost (transcripts), priced by the model of each call. @example `0.0315` */
export const ATTR_SUBAGENT_COST_AMOUNT = 'subagent.cost.amount' as const;
/** Currency of `subagent.cost.amount` and `subagent.session.cost.amount`: ISO 4217. @example `USD` */
export const ATTR_SUBAGENT_COST_CURRENCY = 'subagent.cost.currency' as const;
/** Models of the run whose calls the price table does not know (their tokens are not in the cost). @example `["<synthetic>"]` */
export const ATTR_SUBAGENT_COST_UNPRICED_MODELS = 'subagent.cost.unpriced_models' as const;
/** On a transcript session's root run: the whole session's cost, its own plus its subagents'. */
export const ATTR_SUBAGENT_SESSION_COST_AMOUNT = 'subagent.session.cost.amount' as const;
/** Currency of `subagent.session.cost.amount`. */
export const ATTR_SUBAGENT_SESSION_COST_CURRENCY = 'subagent.session.cost.currency' as const;
/** Transcripts: where the usage is approximate, in the reader's words. @example `["claude-code:subagent-final-usage-from-parent"]` */
export const ATTR_SUBAGENT_USAGE_NOTES = 'subagent.usage.notes' as const;
/** `proxy --agent-telemetry`: whether the agent's own telemetry about the run came (`joined`) or not (`none`). */
export const ATTR_SUBAGENT_AGENT_TELEMETRY = 'subagent.agent_telemetry' as const;
/** Tokens in the agent's context window at its last ACP `usage_update` of the run. Not token usage. */
export const ATTR_SUBAGENT_CONTEXT_WINDOW_USED = 'subagent.context_window.used' as const;
/** Size of the agent's context window in tokens, from its last ACP `usage_update` of the run. */
export const ATTR_SUBAGENT_CONTEXT_WINDOW_SIZE = 'subagent.context_window.size' as const;
/** Cost of the whole ACP session so far (cumulative, not this run's), from the last `usage_update` of the run. */
export const ATTR_SUBAGENT_SESSION_CUMULATIVE_COST_AMOUNT = 'subagent.session.cumulative_cost.amount' as const;
/** Input tokens of the whole ACP session so far, when an agent reported session totals that could not be made per-run. */
export const ATTR_SUBAGENT_SESSION_CUMULATIVE_INPUT_TOKENS = 'subagent.session.cumulative_usage.input_tokens' as const;
/** Output tokens of the whole ACP session so far, in the same case. */
export const ATTR_SUBAGENT_SESSION_CUMULATIVE_OUTPUT_TOKENS =
  'subagent.session.cumulative_usage.output_tokens' as const;
/** Currency of `subagent.session.cumulative_cost.amount`. @example `USD` */
export const ATTR_SUBAGENT_SESSION_CUMULATIVE_COST_CURRENCY = 'subagent.session.cumulative_cost.currency' as const;
/** The ACP tool call's title (`gen_ai.tool.name` is the agent's own tool name when it reports one). @example `Read config.json` */
export const ATTR_SUBAGENT_TOOL_TITLE = 'subagent.tool.title' as const;
/**
 * The answer to the agent's permission request for this tool call: the
 * selected option's kind (`allow_once`, `allow_always`, `reject_once`,
 * `reject_always`), `selected`, `cancelled`, `error`, or `pending`.
 */
export const ATTR_SUBAGENT_TOOL_PERMISSION_OUTCOME = 'subagent.tool.permission.outcome' as const;
/** Id of the permission option the client selected. */
export const ATTR_SUBAGENT_TOOL_PERMISSION_OPTION_ID = 'subagent.tool.permission.option_id' as const;
/** Which signal lost data: `traces` or `metrics`. */
export const ATTR_SUBAGENT_TELEMETRY_SIGNAL = 'subagent.telemetry.signal' as const;
/** Which destination lost data: `otlp`, `file` or `console`. */
export const ATTR_SUBAGENT_TELEMETRY_EXPORTER = 'subagent.telemetry.exporter' as const;

export const TELEMETRY_SIGNAL_VALUE_TRACES = 'traces' as const;
export const TELEMETRY_SIGNAL_VALUE_METRICS = 'metrics' as const;
export const TELEMETRY_EXPORTER_VALUE_OTLP = 'otlp' as const;
export const TELEMETRY_EXPORTER_VALUE_FILE = 'file' as const;
export const TELEMETRY_EXPORTER_VALUE_CONSOLE = 'console' as const;

/** `error.type` of a failed tool call whose record names no error class. */
export const ERROR_TYPE_VALUE_TOOL_ERROR = 'tool_error' as const;

export const OUTPUT_SOURCE_VALUE_MESSAGE = 'message' as const;
export const OUTPUT_SOURCE_VALUE_STREAM = 'stream' as const;
export const OUTPUT_SOURCE_VALUE_NONE = 'none' as const;

export const STOP_REASON_VALUE_COMPLETED = 'completed' as const;
export const STOP_REASON_VALUE_MAX_TOKENS = 'max-tokens' as const;
export const STOP_REASON_VALUE_ABORTED = 'aborted' as const;
export const STOP_REASON_VALUE_ERROR = 'error' as const;
export const STOP_REASON_VALUE_REFUSAL = 'refusal' as const;
/** A transcript run whose file says nothing about how it ended: never `completed` by default, no error status (decision 0093). */
export const STOP_REASON_VALUE_UNKNOWN = 'unknown' as const;

export const FINISH_REASON_VALUE_STOP = 'stop' as const;
export const FINISH_REASON_VALUE_LENGTH = 'length' as const;
export const FINISH_REASON_VALUE_CANCELLED = 'cancelled' as const;
export const FINISH_REASON_VALUE_ERROR = 'error' as const;
export const FINISH_REASON_VALUE_CONTENT_FILTER = 'content_filter' as const;
/** Conventions value for a model call that ended to call tools (dsh finish kind `tool-calls`). */
export const FINISH_REASON_VALUE_TOOL_CALLS = 'tool_call' as const;

// ---------------------------------------------------------------- span names

export const SPAN_NAME_INVOKE_AGENT = 'invoke_agent' as const;
export const SPAN_NAME_CHAT = 'chat' as const;
export const SPAN_NAME_EXECUTE_TOOL = 'execute_tool' as const;
/**
 * The one span `subagent-otel check` sends to test the configured trace path.
 * Not a run: it carries no `gen_ai.operation.name`, so no run count or
 * dashboard picks it up.
 */
export const SPAN_NAME_CHECK = 'subagent-otel check' as const;

// ---------------------------------------------------------------- metrics

/** Counter of finished runs by stop reason, agent name, provider and output source. Prometheus: `subagent_runs_total`. */
export const METRIC_SUBAGENT_RUNS = 'subagent.runs' as const;
/** What finished runs cost, in US dollars (transcripts): by `gen_ai.agent.name`, `gen_ai.provider.name`, `subagent.stop_reason`. */
export const METRIC_SUBAGENT_COST_USD = 'subagent.cost.usd' as const;
/** Previous names only (`gen_ai_previous`): histogram of a run's tokens by `gen_ai.token.type`. Prometheus: `gen_ai_client_token_usage`. */
export const METRIC_GEN_AI_CLIENT_TOKEN_USAGE = 'gen_ai.client.token.usage' as const;
/**
 * Histogram of run durations in seconds (equal to the run span's duration). Prometheus:
 * `gen_ai_invoke_agent_duration`. Default (v0.1.0): in-process runs only; previous names: every run.
 */
export const METRIC_GEN_AI_INVOKE_AGENT_DURATION = 'gen_ai.invoke_agent.duration' as const;
/**
 * v0.1.0 (the default): client-side duration of a run in another process (`gen_ai.operation.name`
 * `invoke_agent`), equal to its CLIENT run span. Prometheus: `gen_ai_client_operation_duration`.
 */
export const METRIC_GEN_AI_CLIENT_OPERATION_DURATION = 'gen_ai.client.operation.duration' as const;
/** v0.1.0 (the default): counter of input tokens (cached included) per model call. Prometheus: `gen_ai_client_inference_usage_input_tokens_total`. */
export const METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_INPUT_TOKENS = 'gen_ai.client.inference.usage.input_tokens' as const;
/** v0.1.0 (the default): counter of output tokens (reasoning included) per model call. */
export const METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_OUTPUT_TOKENS =
  'gen_ai.client.inference.usage.output_tokens' as const;
/** v0.1.0 (the default): counter of input tokens read from the provider cache (a subset of input). */
export const METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_CACHE_READ_INPUT_TOKENS =
  'gen_ai.client.inference.usage.cache_read.input_tokens' as const;
/** v0.1.0 (the default): counter of input tokens written to the provider cache (a subset of input). */
export const METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_CACHE_WRITE_INPUT_TOKENS =
  'gen_ai.client.inference.usage.cache_write.input_tokens' as const;
/** v0.1.0 (the default): counter of output tokens spent on reasoning (a subset of output). */
export const METRIC_GEN_AI_CLIENT_INFERENCE_USAGE_REASONING_OUTPUT_TOKENS =
  'gen_ai.client.inference.usage.reasoning.output_tokens' as const;
/** v0.1.0 (the default): histogram of input tokens per model call (percentiles, not totals). */
export const METRIC_GEN_AI_CLIENT_INFERENCE_OPERATION_INPUT_TOKENS =
  'gen_ai.client.inference.operation.input_tokens' as const;
/** v0.1.0 (the default): histogram of output tokens per model call (percentiles, not totals). */
export const METRIC_GEN_AI_CLIENT_INFERENCE_OPERATION_OUTPUT_TOKENS =
  'gen_ai.client.inference.operation.output_tokens' as const;
/** v0.1.0 (the default): histogram of model calls per run, recorded once per run whose steps are known. */
export const METRIC_GEN_AI_INVOKE_AGENT_INFERENCE_CALLS = 'gen_ai.invoke_agent.inference_calls' as const;
/** v0.1.0 (the default): histogram of tool calls per run, recorded once per run. */
export const METRIC_GEN_AI_INVOKE_AGENT_TOOL_CALLS = 'gen_ai.invoke_agent.tool_calls' as const;
/** Histogram of tool call durations in seconds (equal to the tool span's duration). Prometheus: `gen_ai_execute_tool_duration`. */
export const METRIC_GEN_AI_EXECUTE_TOOL_DURATION = 'gen_ai.execute_tool.duration' as const;
/** Counter of frames that failed validation and were skipped, by origin and error code. Prometheus: `subagent_frames_malformed_total`. */
export const METRIC_SUBAGENT_FRAMES_MALFORMED = 'subagent.frames.malformed' as const;
/** Counter of runs whose runtime-reported output differs from the selection. Prometheus: `subagent_output_mismatches_total`. */
export const METRIC_SUBAGENT_OUTPUT_MISMATCHES = 'subagent.output.mismatches' as const;
/** Counter of spans or metric batches an exporter failed to deliver, by signal and exporter. Prometheus: `subagent_telemetry_dropped_total`. */
export const METRIC_SUBAGENT_TELEMETRY_DROPPED = 'subagent.telemetry.dropped' as const;
/** Counter `subagent-otel check` adds 1 to, to test the configured metric path (unit `{check}`, no attributes). */
export const METRIC_SUBAGENT_CHECKS = 'subagent.checks' as const;

export const UNIT_SECONDS = 's' as const;
export const UNIT_TOKENS = '{token}' as const;
export const UNIT_RUNS = '{run}' as const;
/** US dollars, as an annotation (UCUM has no currency units); Prometheus names the counter `subagent_cost_usd_total`. */
export const UNIT_USD = '{USD}' as const;
/** The currency of the price table. */
export const COST_CURRENCY_USD = 'USD' as const;
export const UNIT_FRAMES = '{frame}' as const;
/** Spans or metric batches. */
export const UNIT_ITEMS = '{item}' as const;
export const UNIT_CHECKS = '{check}' as const;
export const UNIT_INFERENCE_CALLS = '{inference_call}' as const;
export const UNIT_TOOL_CALLS = '{tool_call}' as const;

/** Bucket advice from the GenAI conventions for `gen_ai.client.token.usage`. */
export const TOKEN_USAGE_BUCKETS: readonly number[] = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
/** Bucket advice of v0.1.0 for `gen_ai.invoke_agent.inference_calls` and `.tool_calls`. */
export const CALL_COUNT_BUCKETS: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128];
/**
 * Bucket advice of the conventions for `gen_ai.invoke_agent.duration` (seconds), used for every run
 * duration: that metric in both naming modes and `gen_ai.client.operation.duration` of runs in another
 * process, so their buckets add up across modes and observers (decision 0095).
 */
export const AGENT_DURATION_BUCKETS: readonly number[] = [
  0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4, 204.8, 409.6,
];
/** Bucket advice from the GenAI conventions for operation durations (seconds): `gen_ai.execute_tool.duration`. */
export const DURATION_BUCKETS: readonly number[] = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

// ---------------------------------------------------------------- which conventions

/** Which GenAI names are emitted (`OTEL_SEMCONV_STABILITY_OPT_IN`, read with the configuration table: decisions 0070, 0121). */
export type { SemconvStability };

/** The usage attribute names of one `SemconvStability`. */
export interface UsageAttributeNames {
  readonly input: string;
  readonly output: string;
  readonly cacheRead: string;
  readonly cacheWrite: string;
  readonly reasoning: string;
}

/** The span attribute names for token usage under `stability`. */
export function usageAttributeNames(stability: SemconvStability): UsageAttributeNames {
  return {
    input: ATTR_GEN_AI_USAGE_INPUT_TOKENS,
    output: ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
    cacheRead: ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    cacheWrite:
      stability === 'latest'
        ? ATTR_GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS
        : ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    reasoning: ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  };
}
