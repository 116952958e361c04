import { describe, expect, it } from 'vitest';
import {
  ACP_USAGE_SCOPE_TABLE_VERSION,
  ACP_USAGE_SCOPES,
  usageDelta,
  usageScopeOf,
} from '../../src/observe/acp-usage-scope.js';

describe('usage scope table', () => {
  it('is version 2; the current claude and codex adapters report per turn, and unknown agents are read per turn', () => {
    expect(ACP_USAGE_SCOPE_TABLE_VERSION).toBe(2);
    expect([
      usageScopeOf('@zed-industries/claude-agent-acp'),
      usageScopeOf('codex-acp'),
      usageScopeOf(undefined),
    ]).toEqual(['turn', 'turn', 'turn']);
    expect(usageScopeOf('x', [{ agent: 'x', agentVersions: '1', scope: 'session' }])).toBe('session');
    expect(ACP_USAGE_SCOPES.map((e) => [e.agent, e.scope])).toEqual([
      ['@agentclientprotocol/claude-agent-acp', 'turn'],
      ['@agentclientprotocol/codex-acp', 'turn'],
      ['@zed-industries/claude-agent-acp', 'turn'],
    ]);
  });
});

describe('usageDelta', () => {
  it('subtracts field by field, optional fields only when the current totals have them', () => {
    expect(
      usageDelta(
        { inputTokens: 2300, outputTokens: 80, totalTokens: 2380, thoughtTokens: 9 },
        { inputTokens: 1000, outputTokens: 50, totalTokens: 1050 },
      ),
    ).toEqual({
      inputTokens: 1300,
      outputTokens: 30,
      totalTokens: 1330,
      thoughtTokens: 9,
    });
  });

  it('gives nothing when a count went down', () => {
    expect(usageDelta({ inputTokens: 10, outputTokens: 80 }, { inputTokens: 11, outputTokens: 50 })).toBeUndefined();
    expect(
      usageDelta(
        { inputTokens: 10, outputTokens: 80, cachedReadTokens: 1 },
        { inputTokens: 1, outputTokens: 5, cachedReadTokens: 2 },
      ),
    ).toBeUndefined();
  });
});
