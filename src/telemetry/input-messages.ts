/**
 * The `gen_ai.input.messages` attribute of a run span: the run's prompt as
 * one GenAI `user` message, under the same content policy as the output
 * (capture switch, redaction hook, length cap keeping the JSON valid).
 * Maps dsh content blocks as the output does, and ACP prompt blocks to the
 * conventions' part types (`text`, `blob` for inline media, `uri` for a
 * resource link); anything else stays a generic part with its own `type`.
 *
 * @module subagent-otel/telemetry/input-messages
 */
import type { Attributes } from '@opentelemetry/api';
import type { ContentBlock } from '../wire/content.js';
import { capJson, outputMessages, type ContentPolicy } from './content-policy.js';
import { describeError, OnceReporter } from './report-once.js';
import {
  ATTR_GEN_AI_INPUT_MESSAGES,
  GEN_AI_PART_TYPE_VALUE_BLOB,
  GEN_AI_PART_TYPE_VALUE_URI,
  GEN_AI_ROLE_VALUE_USER,
} from './semconv.js';
import { isJsonObject, type JsonObject } from '../wire/json-values.js';

const reports = new OnceReporter();

/** The conventions' modality of a MIME type (`image/png` -> `image`), else `fallback`. */
function modalityOf(mimeType: unknown, fallback: string): string {
  if (typeof mimeType !== 'string') return fallback;
  const kind = mimeType.split('/')[0] ?? '';
  return kind === 'image' || kind === 'audio' || kind === 'video' ? kind : fallback;
}

/** One ACP-only block as a part, or `undefined` when the output mapping applies. */
function acpPart(block: JsonObject): JsonObject | undefined {
  const type = block['type'];
  if ((type === 'image' || type === 'audio') && typeof block['data'] === 'string') {
    const part: JsonObject = { type: GEN_AI_PART_TYPE_VALUE_BLOB, modality: type, content: block['data'] };
    if (typeof block['mimeType'] === 'string') part['mime_type'] = block['mimeType'];
    return part;
  }
  if (type === 'resource_link' && typeof block['uri'] === 'string') {
    const part: JsonObject = {
      type: GEN_AI_PART_TYPE_VALUE_URI,
      modality: modalityOf(block['mimeType'], 'document'),
      uri: block['uri'],
    };
    if (typeof block['mimeType'] === 'string') part['mime_type'] = block['mimeType'];
    return part;
  }
  return undefined;
}

/**
 * The `gen_ai.input.messages` value (before any cap) for prompt blocks: one
 * `user` message whose parts are the blocks, in order.
 */
export function inputMessages(blocks: readonly unknown[]): JsonObject[] {
  const parts = blocks.map((block) => {
    const acp = isJsonObject(block) ? acpPart(block) : undefined;
    if (acp !== undefined) return acp;
    // The output mapping of one block: text, reasoning, tool call, tool result, generic.
    const [message] = outputMessages([block], '');
    const mapped =
      isJsonObject(message) && Array.isArray(message['parts']) ? (message['parts'][0] as unknown) : undefined;
    return isJsonObject(mapped) ? mapped : { type: 'unknown', value: block };
  });
  return [{ role: GEN_AI_ROLE_VALUE_USER, parts }];
}

/**
 * The input attribute of a run span.
 * @returns `gen_ai.input.messages` (JSON, within `policy.maxLength`, trailing
 *   parts dropped when emptying fields is not enough) when capture is on and
 *   the run has a prompt; `{}` otherwise, when the redaction hook throws or
 *   returns something other than a JSON array, or when even an emptied
 *   message does not fit. Never throws; never mutates `prompt`.
 */
export function inputAttributes(prompt: readonly ContentBlock[] | undefined, policy: ContentPolicy): Attributes {
  if (!policy.capture || prompt === undefined || prompt.length === 0) return {};
  let blocks: readonly unknown[] = prompt;
  if (policy.redact !== undefined) {
    try {
      const redacted: unknown = policy.redact(JSON.stringify(prompt));
      if (typeof redacted !== 'string') throw new TypeError(`redact returned ${typeof redacted}, not a string`);
      const parsed: unknown = JSON.parse(redacted);
      if (!Array.isArray(parsed)) throw new TypeError('redact returned JSON that is not an array of blocks');
      blocks = parsed;
    } catch (error) {
      reports.report(
        'warn',
        `redact-input:${describeError(error)}`,
        `content redaction hook failed on a prompt (${describeError(error)}); input content left out of telemetry`,
      );
      return {};
    }
  }
  const capped = capJson(inputMessages(blocks), policy.maxLength, (copy) => {
    const first = Array.isArray(copy) ? (copy[0] as unknown) : undefined;
    return isJsonObject(first) && Array.isArray(first['parts']) ? first['parts'] : undefined;
  });
  return capped === undefined ? {} : { [ATTR_GEN_AI_INPUT_MESSAGES]: capped.json };
}
