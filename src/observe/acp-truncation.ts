/**
 * The versioned table of truncation signatures: how real ACP agents say "the
 * model stopped at its output-token limit" without the protocol's
 * `max_tokens` stop reason, and the pure matcher that recognises them. An
 * answer that matches a signature becomes stop reason `max-tokens`, and the
 * run records which signature (`subagent.stop_reason.inferred_from`); an
 * answer that matches none is left exactly as it was.
 *
 * A signature looks at one of two answers of a prompt turn:
 * - a JSON-RPC error (`kind: 'error'`): its `code` and either its typed
 *   `data.errorKind` or a pattern over its text (the `message`, and `data` /
 *   `data.message` where agents put the cause);
 * - a prompt result (`kind: 'result'`): its raw `stopReason` and a value at a
 *   path inside its `_meta`;
 * - a prompt result and the turn's last agent text chunk (`kind: 'text'`):
 *   an agent that reports the failure in the chat and ends the turn normally.
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

import { isJsonObject } from '../wire/json-values.js';

/** Version of {@link ACP_TRUNCATION_SIGNATURES}; bumped on every change to the table. */
export const ACP_TRUNCATION_TABLE_VERSION = 2 as const;

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
  /**
   * Must match the error text: `message`, then `data` / `data.message` (each
   * tested on its own). Absent when the signature is a typed error kind.
   */
  readonly pattern?: RegExp;
  /**
   * Must equal the answer's `data.errorKind` (a typed failure: matched
   * instead of the text, which clients that advertise typed failures do not
   * get). A signature has `pattern` or `errorKind`, not both.
   */
  readonly errorKind?: string;
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

/**
 * A signature over a prompt result and the turn's last agent text chunk: an
 * agent that tells an ordinary client about the failure in the chat and then
 * ends the turn normally.
 */
export interface AcpTextTruncationSignature {
  readonly id: string;
  readonly agent: string;
  readonly agentVersions: string;
  readonly kind: 'text';
  /** The raw ACP `stopReason` the result must carry (e.g. `end_turn`). */
  readonly stopReason: string;
  /** Must match the whole last `agent_message_chunk` text of the turn (anchor it: a reply that merely quotes the sentence must not match). */
  readonly pattern: RegExp;
}

/** One entry of the table. */
export type AcpTruncationSignature =
  AcpErrorTruncationSignature | AcpResultTruncationSignature | AcpTextTruncationSignature;

/** What an agent answered to `session/prompt`, as the matcher reads it. */
export type AcpTurnAnswer =
  | { readonly kind: 'error'; readonly code: number; readonly message: string; readonly data?: unknown }
  | {
      readonly kind: 'result';
      readonly stopReason: string;
      readonly meta?: Readonly<Record<string, unknown>>;
      /** The turn's last agent text chunk, when the tracker kept it. */
      readonly lastText?: string;
    };

/**
 * The table, newest agent versions first. Rows of versions the real-agent
 * tests no longer run (they pin the current adapters only) are kept as
 * historic: they cost nothing and old installs still send those bytes.
 *
 * gemini-cli 0.61 has no entry: when Gemini stops at `MAX_TOKENS` it
 * answers `end_turn` and its `_meta.quota` carries only token counts, so
 * nothing on the wire tells a truncated turn from a finished one; the proxy
 * learns it from Gemini's own telemetry (`proxy --agent-telemetry`,
 * docs/AGENTS.md).
 */
export const ACP_TRUNCATION_SIGNATURES: readonly AcpTruncationSignature[] = [
  {
    id: 'claude-agent-acp/error_kind_max_output_tokens@2',
    agent: '@agentclientprotocol/claude-agent-acp',
    agentVersions: '0.101 (typed error kinds since its PR #582)',
    kind: 'error',
    // -32603 with `data: { errorKind: "max_output_tokens" }`; clients that advertise typed failures get no
    // message text, so the kind, not the sentence, is what is matched.
    code: -32603,
    errorKind: 'max_output_tokens',
  },
  {
    id: 'codex-acp/incomplete_text_chunk@2',
    agent: '@agentclientprotocol/codex-acp',
    agentVersions: '2.6 (over @openai/codex 0.166)',
    kind: 'text',
    // The failure becomes the turn's last text chunk (no messageId) and the turn answers end_turn:
    // "Incomplete response returned, reason: max_output_tokens\n\n".
    stopReason: 'end_turn',
    pattern: /^Incomplete response returned, reason: max_output_tokens\s*$/,
  },
  {
    id: 'codex-acp/max_output_tokens@1',
    agent: 'codex-acp',
    agentVersions: '@zed-industries/codex-acp 0.13-0.16 (historic: archived, no longer tested)',
    kind: 'error',
    // codex answers -32603 `Internal error`; the cause travels in `data.message`:
    // "... Incomplete response returned, reason: max_output_tokens".
    code: -32603,
    pattern: /Incomplete response returned, reason: max_output_tokens/,
  },
  {
    id: 'claude-agent-acp/output_token_maximum@1',
    agent: '@zed-industries/claude-agent-acp',
    agentVersions:
      '@zed-industries/claude-agent-acp 0.23 (historic: no longer tested; 0.101 still sends this text to clients without typed failures)',
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
  else if (isJsonObject(data)) {
    const message = data['message'];
    if (typeof message === 'string') texts.push(message);
  }
  return texts;
}

/** `data.errorKind` of an error answer, when it is a string. */
function errorKindOf(data: unknown): string | undefined {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const kind = (data as Record<string, unknown>)['errorKind'];
  return typeof kind === 'string' ? kind : undefined;
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
      if (signature.errorKind !== undefined) {
        if (errorKindOf(answer.data) === signature.errorKind) return signature;
        continue;
      }
      const { pattern } = signature;
      if (pattern !== undefined && errorTexts(answer).some((text) => test(pattern, text))) return signature;
    } else if (signature.kind === 'text') {
      if (answer.kind !== 'result' || answer.stopReason !== signature.stopReason || answer.lastText === undefined)
        continue;
      if (test(signature.pattern, answer.lastText)) return signature;
    } else {
      if (answer.kind !== 'result' || answer.stopReason !== signature.stopReason) continue;
      const value = valueAt(answer.meta, signature.metaPath);
      if (typeof value === 'string' && test(signature.pattern, value)) return signature;
    }
  }
  return undefined;
}
