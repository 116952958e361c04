/**
 * The one error shape the wire layer returns for input it rejects, and the
 * conversion from schema-library issues to it. Owns no parsing: validators in
 * this folder call `wireErrorFromIssues`. Nothing here throws.
 *
 * @module subagent-otel/wire/wire-error
 */
import type * as z from 'zod';

/** Why a frame, event or record was rejected. */
export type WireErrorCode =
  /** The bytes were not JSON (or not valid UTF-8). */
  | 'not-json'
  /** JSON, but not an object where one belongs. */
  | 'not-object'
  /** An object, but not a JSON-RPC 2.0 message. */
  | 'not-jsonrpc'
  /** A known shape with a field of the wrong type or missing. */
  | 'invalid';

/**
 * A rejected input, described for a person: which field, what was expected,
 * what arrived. `path` is a dotted path from the validated value's root
 * (`params.event.data.message.content`), `''` for the root itself.
 */
export interface WireError {
  readonly code: WireErrorCode;
  readonly path: string;
  readonly expected: string;
  readonly received: string;
  /** One line: `<path>: expected <expected>, received <received>`. */
  readonly message: string;
}

/** Describes a JSON value's type in a few words, never echoing its content beyond a short preview of scalars. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing (field missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `array(${value.length})`;
  switch (typeof value) {
    case 'string':
      return value.length > 24 ? `string(${value.length} chars)` : `string ${JSON.stringify(value)}`;
    case 'number':
    case 'boolean':
      return `${typeof value} ${String(value)}`;
    case 'object':
      return 'object';
    default:
      return typeof value;
  }
}

/** Builds a `WireError`, composing its one-line message. */
export function wireError(code: WireErrorCode, path: string, expected: string, received: string): WireError {
  const where = path === '' ? '(root)' : path;
  return { code, path, expected, received, message: `${where}: expected ${expected}, received ${received}` };
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

function expectedOf(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected;
    case 'invalid_value':
      return issue.values.map((v) => JSON.stringify(v)).join(' | ');
    case 'too_small':
      return `${issue.origin} >= ${String(issue.minimum)}`;
    case 'too_big':
      return `${issue.origin} <= ${String(issue.maximum)}`;
    case 'invalid_union':
      return 'one of the known shapes';
    default:
      return issue.message;
  }
}

/**
 * Converts the first schema issue into a `WireError` with code `invalid`,
 * prefixing `basePath` (e.g. `params.event`). Reads the received value from
 * `root` by the issue's path. Never throws.
 */
export function wireErrorFromIssues(issues: readonly z.core.$ZodIssue[], root: unknown, basePath = ''): WireError {
  const issue = deepestIssue(issues);
  if (issue === undefined) return wireError('invalid', basePath, 'a valid value', describeValue(root));
  const path = [basePath, ...issue.path.map(String)].filter((p) => p !== '').join('.');
  return wireError('invalid', path, expectedOf(issue), describeValue(valueAt(root, issue.path)));
}

/** For union failures, descend into the branch that got furthest, so the message names a real field. */
function deepestIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue | undefined {
  const first = issues[0];
  if (first === undefined) return undefined;
  if (first.code === 'invalid_union' && first.errors.length > 0) {
    let best: z.core.$ZodIssue | undefined;
    for (const branch of first.errors) {
      const candidate = deepestIssue(branch);
      if (candidate === undefined) continue;
      const full = { ...candidate, path: [...first.path, ...candidate.path] } as z.core.$ZodIssue;
      if (best === undefined || full.path.length > best.path.length) best = full;
    }
    return best ?? first;
  }
  return first;
}
