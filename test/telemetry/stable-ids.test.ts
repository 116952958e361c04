/**
 * Ids derived from stable names (decision 0093): the first hex characters of
 * SHA-256 over `subagent-otel/<kind>/<names>`, so a replay or a restarted
 * watch gives the same ids; and the generator that hands a planned id to
 * the one span started inside `withPlannedIds`, random ids otherwise. The
 * expected digests were taken with `printf '%s' NAME | sha256sum`.
 */
import { describe, expect, it } from 'vitest';
import {
  StableIdGenerator,
  stableChatSpanId,
  stableRunSpanId,
  stableToolSpanId,
  stableTraceId,
} from '../../src/telemetry/stable-ids.js';

describe('stable ids', () => {
  it('are the leading hex characters of SHA-256 over the kind and names', () => {
    // sha256("subagent-otel/trace/session-1") = 252d1273f2e78b14835589036f4429b4 57af...
    expect(stableTraceId('session-1')).toBe('252d1273f2e78b14835589036f4429b4');
    // sha256("subagent-otel/run/run-a") = 6c2c652b92870235 6387...
    expect(stableRunSpanId('run-a')).toBe('6c2c652b92870235');
    // sha256("subagent-otel/tool/run-a/call-1") = 5933d6fc0cd2669f b17d...
    expect(stableToolSpanId('run-a', 'call-1')).toBe('5933d6fc0cd2669f');
    // sha256("subagent-otel/chat/run-a/2") = e4edf1b67a267445 11ab...
    expect(stableChatSpanId('run-a', 2)).toBe('e4edf1b67a267445');
  });

  it('differ between kinds for the same names', () => {
    const ids = new Set([stableRunSpanId('x'), stableToolSpanId('x', '0'), stableChatSpanId('x', 0)]);
    expect(ids.size).toBe(3);
  });
});

describe('StableIdGenerator', () => {
  it('hands the planned ids to the span started inside withPlannedIds only', () => {
    const generator = new StableIdGenerator();
    const inside = generator.withPlannedIds({ spanId: 'aaaaaaaaaaaaaaaa', traceId: 'b'.repeat(32) }, () => [
      generator.generateSpanId(),
      generator.generateTraceId(),
    ]);
    expect(inside).toEqual(['aaaaaaaaaaaaaaaa', 'b'.repeat(32)]);
    const after = generator.generateSpanId();
    expect(after).toMatch(/^[0-9a-f]{16}$/);
    expect(after).not.toBe('aaaaaaaaaaaaaaaa');
  });

  it('gives a random trace id when only a span id was planned', () => {
    const generator = new StableIdGenerator();
    const traceId = generator.withPlannedIds({ spanId: 'cccccccccccccccc' }, () => generator.generateTraceId());
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('clears the plan when the start throws', () => {
    const generator = new StableIdGenerator();
    expect(() =>
      generator.withPlannedIds({ spanId: 'dddddddddddddddd' }, () => {
        throw new Error('start failed');
      }),
    ).toThrow('start failed');
    expect(generator.generateSpanId()).not.toBe('dddddddddddddddd');
  });
});
