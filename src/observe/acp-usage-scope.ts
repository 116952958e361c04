/**
 * Whether an ACP agent's `PromptResponse.usage` counts one prompt turn or the
 * whole session so far, and the arithmetic that turns session totals into a
 * turn's figures. The protocol's schema describes `usage` as totals across
 * the session, but the agents seen in practice send per-turn figures
 * (claude-agent-acp resets its counts at every prompt); reading per-turn
 * figures as totals would make every later turn's usage wrong, so `turn` is
 * the default and an agent is declared `session` only when it is known to
 * send totals. Versioned like the truncation table.
 *
 * Pure: no I/O, no state, never throws.
 *
 * @module subagent-otel/observe/acp-usage-scope
 */
import type { AcpUsage } from '../wire/acp-protocol.js';

/** Version of {@link ACP_USAGE_SCOPES}; bumped on every change. */
export const ACP_USAGE_SCOPE_TABLE_VERSION = 2 as const;

/** What a `PromptResponse.usage` of an agent counts. */
export type AcpUsageScope = 'turn' | 'session';

/** One agent's usage scope, by its `initialize` `agentInfo.name`. */
export interface AcpUsageScopeEntry {
  readonly agent: string;
  readonly agentVersions: string;
  readonly scope: AcpUsageScope;
}

/** Scope of agents not in the table. */
export const ACP_DEFAULT_USAGE_SCOPE: AcpUsageScope = 'turn';

/**
 * Agents whose usage scope was checked (by the real-agent tests: a second
 * turn of a session reports one call's figures, not the sum). The archived
 * codex-acp 0.16 sent no usage at all, and gemini-cli 0.61 sends per-turn
 * counts in `_meta.quota` (never totals).
 */
export const ACP_USAGE_SCOPES: readonly AcpUsageScopeEntry[] = [
  { agent: '@agentclientprotocol/claude-agent-acp', agentVersions: '0.101', scope: 'turn' },
  { agent: '@agentclientprotocol/codex-acp', agentVersions: '2.6', scope: 'turn' },
  // `accumulatedUsage` is reset when each prompt starts: the figures are the turn's.
  { agent: '@zed-industries/claude-agent-acp', agentVersions: '0.23 (historic)', scope: 'turn' },
];

/** The scope of `agent` in `table`; {@link ACP_DEFAULT_USAGE_SCOPE} when it is unknown or not listed. */
export function usageScopeOf(
  agent: string | undefined,
  table: readonly AcpUsageScopeEntry[] = ACP_USAGE_SCOPES,
): AcpUsageScope {
  return table.find((entry) => entry.agent === agent)?.scope ?? ACP_DEFAULT_USAGE_SCOPE;
}

/**
 * One turn's usage from two session totals: `current - previous`, field by
 * field (optional fields only when `current` has them).
 * @returns the difference, or `undefined` when any count went down (the
 *   agent reset its totals, or the figures are not totals): no usage rather
 *   than a wrong one.
 */
export function usageDelta(current: AcpUsage, previous: AcpUsage): AcpUsage | undefined {
  const fields = [
    'inputTokens',
    'outputTokens',
    'totalTokens',
    'thoughtTokens',
    'cachedReadTokens',
    'cachedWriteTokens',
  ] as const;
  const delta: Record<string, number> = {};
  for (const field of fields) {
    const now = current[field];
    if (now === undefined) continue;
    const before = previous[field] ?? 0;
    if (now < before) return undefined;
    delta[field] = now - before;
  }
  return delta as unknown as AcpUsage;
}
