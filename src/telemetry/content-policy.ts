/**
 * The content policy for a run's output in telemetry: whether the output text
 * is recorded at all, how long a content attribute may be, and the redaction
 * hook that sees it first. Turns a selected output (chosen by `output/`, never
 * here) into the output attributes of the run span: `subagent.output`,
 * `gen_ai.output.messages`, and the always-present `subagent.output.sha256`,
 * `subagent.output.length` and `subagent.output.source`.
 *
 * Lengths are JavaScript string lengths (UTF-16 code units), the unit the
 * OpenTelemetry JS SDK applies `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT` in, so a
 * capped value is never cut again by the SDK.
 *
 * @module subagent-otel/telemetry/content-policy
 */
import { createHash } from 'node:crypto';
import type { Attributes } from '@opentelemetry/api';
import type { ContentBlock } from '../wire/content.js';
import type { OutputSource } from '../output/assistant-output.js';
import {
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_SUBAGENT_OUTPUT,
  ATTR_SUBAGENT_OUTPUT_LENGTH,
  ATTR_SUBAGENT_OUTPUT_SHA256,
  ATTR_SUBAGENT_OUTPUT_SOURCE,
  ATTR_SUBAGENT_OUTPUT_TRUNCATED,
  GEN_AI_PART_TYPE_VALUE_REASONING,
  GEN_AI_PART_TYPE_VALUE_TEXT,
  GEN_AI_PART_TYPE_VALUE_TOOL_CALL,
  GEN_AI_PART_TYPE_VALUE_TOOL_CALL_RESPONSE,
  GEN_AI_ROLE_VALUE_ASSISTANT,
} from './semconv.js';
import { describeError, OnceReporter } from './report-once.js';
import { SETTINGS, type Environment } from './config.js';
import { isJsonObject, type JsonObject } from '../wire/json-values.js';

/** Appended to every text field the length cap shortened. */
export const TRUNCATION_MARKER = '...[truncated]';

/** How output content is recorded. */
export interface ContentPolicy {
  /**
   * Record `subagent.output` and `gen_ai.output.messages`. Default `true`.
   * Environment: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`. When
   * `false`, no output text reaches telemetry; hash, length and source still do.
   */
  readonly capture: boolean;
  /**
   * Longest value (UTF-16 code units) of each content attribute; longer
   * content is shortened field by field keeping the JSON valid, and
   * `subagent.output.truncated` is set. Default: no cap. Environment:
   * `OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT`, else `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`.
   */
  readonly maxLength?: number;
  /**
   * Sees the output JSON (the `ContentBlock[]` text) before anything is
   * recorded and returns the JSON to record instead (it must stay a JSON
   * array of blocks). A hook that throws or returns anything else means no
   * content is recorded for that run; hash and length are still recorded.
   */
  readonly redact?: (json: string) => string;
}

/** An environment as `process.env` shapes it (defined with the configuration table). */
export type { Environment };

const reports = new OnceReporter();

/** A content policy and the fail-closed decisions taken while resolving it. */
export interface ResolvedContentPolicy {
  readonly policy: ContentPolicy;
  /** One line per setting that was not understood (or a cap of 0) and therefore turned content capture off. */
  readonly warnings: readonly string[];
}

/**
 * {@link resolveContentPolicy} without reporting: the policy and the
 * warnings a caller must show (the proxy prints them on stderr, where its
 * diag logger does not go). Every privacy setting fails closed: an
 * unrecognised capture value, a length limit that is not a whole number, and
 * a limit of 0 all mean no content (hash, length and source stay). Never throws.
 */
export function resolveContentPolicyWithWarnings(
  options: Partial<ContentPolicy> | undefined,
  env: Environment,
): ResolvedContentPolicy {
  const warnings: string[] = [];
  let capture = options?.capture;
  if (capture === undefined) {
    const setting = SETTINGS.captureContent;
    const raw = env[setting.env];
    capture = setting.parse(raw ?? '');
    if (capture === undefined) {
      warnings.push(
        `${setting.env}=${JSON.stringify(raw)} is not one of ${setting.range}; no output content is recorded`,
      );
      capture = false;
    }
  }

  let maxLength: number | undefined;
  if (options?.maxLength !== undefined) {
    if (isValidLimit(options.maxLength)) maxLength = options.maxLength;
    else if (options.maxLength === 0)
      capture = false; // a cap of 0: no content, as asked
    else {
      warnings.push(
        `content maxLength ${String(options.maxLength)} is not a whole number; no output content is recorded`,
      );
      capture = false;
    }
  } else {
    // The span-specific variable wins when set, as in the SDK; a set but unusable one fails closed.
    const setting = SETTINGS.maxContentLength;
    for (const name of [setting.precededBy, setting.env]) {
      const raw = name === undefined ? undefined : env[name];
      if (name === undefined || raw === undefined || raw.trim() === '') continue;
      const limit = setting.parse(raw);
      if (limit === 0) capture = false;
      else if (limit !== undefined) maxLength = limit;
      else {
        warnings.push(`${name}=${JSON.stringify(raw)} is not a whole number; no output content is recorded`);
        capture = false;
      }
      break;
    }
  }

  const policy: { capture: boolean; maxLength?: number; redact?: (json: string) => string } = { capture };
  if (maxLength !== undefined) policy.maxLength = maxLength;
  if (options?.redact !== undefined) policy.redact = options.redact;
  return { policy, warnings };
}

function isValidLimit(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

/**
 * Resolves the content policy once, from options over environment.
 *
 * @param options explicit settings; each defined field wins over the environment.
 * @param env the environment to read (normally `process.env`).
 * @returns the policy. Fails closed: an unrecognised capture value or an
 *   unusable length limit turns capture off and is reported once through the
 *   diag logger; a limit of 0 turns capture off. Never throws.
 */
export function resolveContentPolicy(options: Partial<ContentPolicy> | undefined, env: Environment): ContentPolicy {
  const { policy, warnings } = resolveContentPolicyWithWarnings(options, env);
  for (const warning of warnings) reports.report('warn', `content:${warning}`, warning);
  return policy;
}

/** SHA-256 of the UTF-8 bytes of `text`, lowercase hex. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Maps one content block to a GenAI message part: `text` and `reasoning` to
 * `{ type, content }`, `tool-call` to `tool_call`, `tool-result` to
 * `tool_call_response`; any other block is kept as a generic part with its own
 * `type`. Never throws on odd input (a non-object becomes a generic part).
 */
function toPart(block: unknown): JsonObject {
  if (!isJsonObject(block)) return { type: 'unknown', value: block };
  switch (block['type']) {
    case 'text':
      return { type: GEN_AI_PART_TYPE_VALUE_TEXT, content: block['text'] };
    case 'reasoning':
      return { type: GEN_AI_PART_TYPE_VALUE_REASONING, content: block['text'] };
    case 'tool-call':
      return {
        type: GEN_AI_PART_TYPE_VALUE_TOOL_CALL,
        id: block['id'],
        name: block['name'],
        arguments: block['arguments'],
      };
    case 'tool-result':
      return { type: GEN_AI_PART_TYPE_VALUE_TOOL_CALL_RESPONSE, id: block['toolCallId'], response: block['content'] };
    default:
      return { ...block };
  }
}

/**
 * The `gen_ai.output.messages` value (before any cap) for blocks and a finish
 * reason: one assistant message whose parts are the blocks, in order.
 */
export function outputMessages(blocks: readonly unknown[], finishReason: string): JsonObject[] {
  return [{ role: GEN_AI_ROLE_VALUE_ASSISTANT, parts: blocks.map(toPart), finish_reason: finishReason }];
}

/** Keys whose string values the cap never shortens (they are shape, not content). */
const SHAPE_KEYS = new Set(['type', 'role', 'finish_reason']);

interface Leaf {
  readonly holder: JsonObject | unknown[];
  readonly key: string | number;
  readonly text: string;
  /** Length of the text once serialized, quotes excluded. */
  readonly jsonLength: number;
}

function setLeaf(leaf: Leaf, value: string): void {
  (leaf.holder as Record<string | number, unknown>)[leaf.key] = value;
}

function collectLeaves(value: unknown, leaves: Leaf[]): void {
  const add = (holder: JsonObject | unknown[], key: string | number, text: string): void => {
    leaves.push({ holder, key, text, jsonLength: JSON.stringify(text).length - 2 });
  };
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (typeof item === 'string') add(value, i, item);
      else collectLeaves(item, leaves);
    });
  } else if (isJsonObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === 'string') {
        if (!SHAPE_KEYS.has(key)) add(value, key, item);
      } else collectLeaves(item, leaves);
    }
  }
}

/** Serialized length of one UTF-16 unit that is not part of a surrogate pair. */
function escapedWidth(code: number): number {
  if (code === 0x22 || code === 0x5c) return 2; // \" and \\
  if (code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) return 2;
  if (code < 0x20) return 6; // \u00XX
  if (code >= 0xd800 && code <= 0xdfff) return 6; // lone surrogate, escaped by JSON.stringify
  return 1;
}

/**
 * The longest prefix of `text` whose serialized form (quotes excluded) is at
 * most `budget` units; never ends inside a surrogate pair or an escape.
 */
function prefixWithin(text: string, budget: number): string {
  let used = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    const pair = code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
    const width = pair ? 2 : escapedWidth(code);
    if (used + width > budget) break;
    used += width;
    i += pair ? 2 : 1;
  }
  return text.slice(0, i);
}

/** Serialized length a field of serialized length `length` has once levelled to `level`. */
function levelled(length: number, level: number): number {
  if (length <= level) return length;
  return level > TRUNCATION_MARKER.length ? level : 0;
}

/**
 * Serializes `value` within `limit` code units, keeping valid JSON. When too
 * long, string fields (shape keys excepted) are levelled: every field longer
 * than a common level is cut to that level, marker included (a prefix plus
 * `TRUNCATION_MARKER`, or empty when the level leaves no room for text), with
 * the highest level that removes enough. So the longest fields shrink first
 * and shorter ones stay whole. Should emptied fields still not fit, trailing
 * elements of the array `dropFrom` returns are dropped.
 *
 * @returns the JSON and whether it was shortened; `undefined` when even that
 *   cannot fit. Never mutates `value`.
 */
export function capJson(
  value: unknown,
  limit: number | undefined,
  dropFrom: (copy: unknown) => unknown[] | undefined = (copy) => (Array.isArray(copy) ? copy : undefined),
): { json: string; truncated: boolean } | undefined {
  const json = JSON.stringify(value) ?? 'null';
  if (limit === undefined || json.length <= limit) return { json, truncated: false };
  const copy: unknown = JSON.parse(json);
  const leaves: Leaf[] = [];
  collectLeaves(copy, leaves);
  const excess = json.length - limit;
  const saved = (level: number): number =>
    leaves.reduce((sum, leaf) => sum + leaf.jsonLength - levelled(leaf.jsonLength, level), 0);
  // Highest level that saves enough: saved() only grows as the level falls.
  let low = 0;
  let high = leaves.reduce((max, leaf) => Math.max(max, leaf.jsonLength), 0);
  if (saved(low) >= excess) {
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (saved(mid) >= excess) low = mid;
      else high = mid - 1;
    }
  }
  for (const leaf of leaves) {
    if (leaf.jsonLength <= low) continue;
    const room = levelled(leaf.jsonLength, low) - TRUNCATION_MARKER.length;
    const kept = room > 0 ? prefixWithin(leaf.text, room) : '';
    setLeaf(leaf, kept === '' ? '' : kept + TRUNCATION_MARKER);
  }
  let current = JSON.stringify(copy);
  const droppable = dropFrom(copy);
  while (current.length > limit && droppable !== undefined && droppable.length > 0) {
    droppable.pop();
    current = JSON.stringify(copy);
  }
  return current.length <= limit ? { json: current, truncated: true } : undefined;
}

/**
 * The output attributes of a run span.
 *
 * @param output the one rule's selection (`undefined` when there was none).
 * @param source which branch of the rule selected it.
 * @param policy the content policy.
 * @param finishReason the run's finish reason for `gen_ai.output.messages`.
 * @returns always `subagent.output.source`, `subagent.output.sha256` and
 *   `subagent.output.length`, computed over `JSON.stringify(output ?? [])`
 *   (exactly `SubagentResult.output`'s JSON), never redacted or capped. With
 *   capture on, also `subagent.output` (the JSON, or the redacted JSON) and,
 *   when there is at least one output block, `gen_ai.output.messages`, each
 *   within `policy.maxLength`, plus
 *   `subagent.output.truncated: true` when either was shortened (a value that
 *   cannot fit even when emptied is left out). With capture off, or when the
 *   redaction hook throws or returns something other than a JSON array, no
 *   content attribute at all. Never throws (the hook's failure is reported
 *   once through the diag logger); never mutates `output`.
 */
export function outputAttributes(
  output: readonly ContentBlock[] | undefined,
  source: OutputSource,
  policy: ContentPolicy,
  finishReason: string,
): Attributes {
  const fullJson = JSON.stringify(output ?? []);
  const attributes: Attributes = {
    [ATTR_SUBAGENT_OUTPUT_SOURCE]: source,
    [ATTR_SUBAGENT_OUTPUT_SHA256]: sha256Hex(fullJson),
    [ATTR_SUBAGENT_OUTPUT_LENGTH]: fullJson.length,
  };
  if (!policy.capture) return attributes;

  let json = fullJson;
  let blocks: readonly unknown[] = output ?? [];
  if (policy.redact !== undefined) {
    try {
      const redacted: unknown = policy.redact(fullJson);
      if (typeof redacted !== 'string') throw new TypeError(`redact returned ${typeof redacted}, not a string`);
      const parsed: unknown = JSON.parse(redacted);
      if (!Array.isArray(parsed)) throw new TypeError('redact returned JSON that is not an array of blocks');
      json = redacted;
      blocks = parsed;
    } catch (error) {
      reports.report(
        'warn',
        `redact:${describeError(error)}`,
        `content redaction hook failed (${describeError(error)}); output content left out of telemetry, hash and length kept`,
      );
      return attributes;
    }
  }

  let truncated = false;
  const capped =
    policy.maxLength !== undefined && json.length > policy.maxLength
      ? capJson(blocks, policy.maxLength)
      : { json, truncated: false };
  if (capped !== undefined) attributes[ATTR_SUBAGENT_OUTPUT] = capped.json;
  truncated ||= capped === undefined || capped.truncated;

  // No output, no output message: an assistant message with empty parts would claim one was produced.
  if (blocks.length > 0) {
    const messages = capJson(outputMessages(blocks, finishReason), policy.maxLength, (copy) => {
      const first = Array.isArray(copy) ? (copy[0] as unknown) : undefined;
      return isJsonObject(first) && Array.isArray(first['parts']) ? first['parts'] : undefined;
    });
    if (messages !== undefined) attributes[ATTR_GEN_AI_OUTPUT_MESSAGES] = messages.json;
    truncated ||= messages === undefined || messages.truncated;
  }

  if (truncated) attributes[ATTR_SUBAGENT_OUTPUT_TRUNCATED] = true;
  return attributes;
}
