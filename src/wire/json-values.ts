/**
 * The one guard for a parsed JSON value that is an object: every reader of
 * untrusted JSON (frames, events, transcripts, settings files, span
 * attributes) asks it before it reads a field.
 *
 * @module subagent-otel/wire/json-values
 */

/** A JSON object's fields, not yet checked: what `isJsonObject` proves a value to be. */
export type JsonObject = Record<string, unknown>;

/**
 * True when `value` is a plain JSON object: of type `object`, not `null`,
 * not an array. Never throws.
 */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` itself when `isJsonObject(value)`, else `undefined`. Never throws. */
export function asJsonObject(value: unknown): JsonObject | undefined {
  return isJsonObject(value) ? value : undefined;
}

/**
 * The JSON object `text` holds, or `undefined` when `text` is not JSON or
 * holds something else (an array, a string, `null`). Never throws.
 */
export function parseJsonObject(text: string): JsonObject | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON (cut or malformed): no object.
    return undefined;
  }
  return asJsonObject(value);
}
