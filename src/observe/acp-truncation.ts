/**
 * The versioned table of truncation signatures: how real ACP agents say "the
 * model stopped at its output-token limit" without the protocol's
 * `max_tokens` stop reason, and the pure matcher that recognises them. An
 * answer that matches a signature becomes stop reason `max-tokens`, and the
 * run records which signature (`subagent.stop_reason.inferred_from`); an
 * answer that matches none is left exactly as it was.
 *
 * A signature looks at one of two answers of a prompt turn:
 * - a JSON-RPC error (`kind: 'error'`): its `code` and a pattern over its
 *   text (the `message`, and `data` / `data.message` where agents put the
 *   cause);
 * - a prompt result (`kind: 'result'`): its raw `stopReason` and a value at a
 *   path inside its `_meta`.
 *
 * Signatures come from the bytes the agents were seen to send (versions in
 * each entry). They are matched whatever the agent calls itself: the
 * patterns are the agents' own sentences, specific enough not to need the
 * agent's name, and a proxy may label the agent differently. Bump
 * {@link ACP_TRUNCATION_TABLE_VERSION} whenever an entry is added, changed or
 * removed; every id carries the version it was introduced in.
 *
 * Pure: no I/O, no state, never throws.
 *
 * @module subagent-otel/observe/acp-truncation
 */

/** Version of {@link ACP_TRUNCATION_SIGNATURES}; bumped on every change to the table. */
export const ACP_TRUNCATION_TABLE_VERSION = 1 as const;

/** A signature over a JSON-RPC error answer to `session/prompt`. */
export interface AcpErrorTruncationSignature {
  /** Stable id recorded as `subagent.stop_reason.inferred_from`: `<agent>/<what>@<table version>`. */
  readonly id: string;
  /** The agent (its `initialize` `agentInfo.name`) the signature was observed from; documentation, not a filter. */
  readonly agent: string;
  /** Agent versions the signature was seen from. */
  readonly agentVersions: string;
  readonly kind: 'error';
  /** JSON-RPC error code the answer must carry. */
  readonly code: number;
  /** Must match the error text: `message`, then `data` / `data.message` (each tested on its own). */
  readonly pattern: RegExp;
}

/** A signature over a prompt result: a raw stop reason plus a value inside its `_meta`. */
export interface AcpResultTruncationSignature {
  readonly id: string;
  readonly agent: string;
  readonly agentVersions: string;
  readonly kind: 'result';
  /** The raw ACP `stopReason` the result must carry (e.g. `end_turn`). */
  readonly stopReason: string;
  /** Path of keys inside the result's `_meta`. */
  readonly metaPath: readonly string[];
  /** The string at `metaPath` must match. */
  readonly pattern: RegExp;
}

/** One entry of the table. */
export type AcpTruncationSignature = AcpErrorTruncationSignature | AcpResultTruncationSignature;

/** What an agent answered to `session/prompt`, as the matcher reads it. */
export type AcpTurnAnswer =
  | { readonly kind: 'error'; readonly code: number; readonly message: string; readonly data?: unknown }
  | { readonly kind: 'result'; readonly stopReason: string; readonly meta?: Readonly<Record<string, unknown>> };

/**
 * The table. gemini-cli 0.61 has no entry: when Gemini stops at
 * `MAX_TOKENS` it answers `end_turn` and its `_meta.quota` carries only
 * token counts, so nothing on the wire tells a truncated turn from a
 * finished one (see the per-agent table of docs/REAL-AGENTS.md).
 */
export const ACP_TRUNCATION_SIGNATURES: readonly AcpTruncationSignature[] = [
  {
    id: 'codex-acp/max_output_tokens@1',
    agent: 'codex-acp',
    agentVersions: '0.13-0.16',
    kind: 'error',
    // codex answers -32603 `Internal error`; the cause travels in `data.message`:
    // "... Incomplete response returned, reason: max_output_tokens".
    code: -32603,
    pattern: /Incomplete response returned, reason: max_output_tokens/,
  },
  {
    id: 'claude-agent-acp/output_token_maximum@1',
    agent: '@zed-industries/claude-agent-acp',
    agentVersions: '0.23',
    kind: 'error',
    // "Internal error: API Error: Claude's response exceeded the 32000 output token maximum. ..."
    code: -32603,
    pattern: /response exceeded the \d+ output token maximum/,
  },
];

/** The strings of an error answer a pattern is tested on, in order. */
function errorTexts(answer: { readonly message: string; readonly data?: unknown }): string[] {
  const texts = [answer.message];
  const { data } = answer;
  if (typeof data === 'string') texts.push(data);
  else if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
    const message = (data as Record<string, unknown>)['message'];
    if (typeof message === 'string') texts.push(message);
  }
  return texts;
}

function valueAt(meta: Readonly<Record<string, unknown>> | undefined, path: readonly string[]): unknown {
  let current: unknown = meta;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/**
 * The first signature of `table` that `answer` matches.
 *
 * @param answer the agent's answer to one `session/prompt`.
 * @param table the signatures to try, in order; default the shipped table.
 * @returns the matching signature, or `undefined` (the answer then keeps its
 *   own stop reason). Never throws; a pattern is tested with a fresh
 *   `lastIndex`, so global patterns cannot carry state between calls.
 */
export function matchTruncation(
  answer: AcpTurnAnswer,
  table: readonly AcpTruncationSignature[] = ACP_TRUNCATION_SIGNATURES,
): AcpTruncationSignature | undefined {
  const test = (pattern: RegExp, text: string): boolean => {
    pattern.lastIndex = 0;
    return pattern.test(text);
  };
  for (const signature of table) {
    if (signature.kind === 'error') {
      if (answer.kind !== 'error' || answer.code !== signature.code) continue;
      if (errorTexts(answer).some((text) => test(signature.pattern, text))) return signature;
    } else {
      if (answer.kind !== 'result' || answer.stopReason !== signature.stopReason) continue;
      const value = valueAt(answer.meta, signature.metaPath);
      if (typeof value === 'string' && test(signature.pattern, value)) return signature;
    }
  }
  return undefined;
}
