/**
 * The dsh wire's content vocabulary (docs/PROTOCOLS.md section 1): token
 * counts clamped into range rather than dropped; content blocks of any type
 * kept, odd known ones as opaque blocks; stream chunks of a known type
 * checked field by field, unknown types passed through.
 */
import { describe, expect, it } from 'vitest';
import {
  clampTokenCount,
  ContentBlockSchema,
  isTextBlock,
  isTextDelta,
  normalizeUsage,
  StreamChunkSchema,
  TokenUsageSchema,
  type ContentBlock,
  type StreamChunk,
} from '../../src/wire/content.js';

describe('token counts', () => {
  it('clamps into 0..MAX_SAFE_INTEGER, flooring fractions', () => {
    expect([-5, Number.NaN, 0, 3.9, 42].map(clampTokenCount)).toEqual([0, 0, 0, 3, 42]);
    expect(clampTokenCount(Number.POSITIVE_INFINITY)).toBe(Number.MAX_SAFE_INTEGER);
    expect(clampTokenCount(2 ** 60)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('normalizes every count of a usage, leaving absent ones absent', () => {
    expect(normalizeUsage({ inputTokens: -1, outputTokens: 7.5, cacheReadTokens: 3 })).toEqual({
      inputTokens: 0,
      outputTokens: 7,
      cacheReadTokens: 3,
    });
    expect(
      normalizeUsage({
        inputTokens: 1,
        outputTokens: 2,
        cacheWriteTokens: 1e400,
        reasoningTokens: 1,
        cacheWrite1hTokens: -2,
      }),
    ).toEqual({
      inputTokens: 1,
      outputTokens: 2,
      cacheWriteTokens: Number.MAX_SAFE_INTEGER,
      reasoningTokens: 1,
      cacheWrite1hTokens: 0,
    });
  });

  it('accepts any JSON number as a count, and refuses a missing count or a string', () => {
    expect(TokenUsageSchema.safeParse({ inputTokens: -3, outputTokens: 1.5 }).success).toBe(true);
    expect(TokenUsageSchema.safeParse({ inputTokens: 1 }).success).toBe(false);
    expect(TokenUsageSchema.safeParse({ inputTokens: '1', outputTokens: 1 }).success).toBe(false);
  });
});

describe('content blocks', () => {
  it('keeps any object with a string type, an odd known block included, and refuses others', () => {
    const odd = { type: 'text', text: 42 };
    expect(ContentBlockSchema.safeParse(odd)).toEqual({ success: true, data: odd });
    expect(ContentBlockSchema.safeParse({ type: 'hologram', depth: 3 }).success).toBe(true);
    expect(ContentBlockSchema.safeParse({ text: 'no type' }).success).toBe(false);
    expect(ContentBlockSchema.safeParse('text').success).toBe(false);
  });

  it('calls a block text only when it is a text block with a string text', () => {
    const blocks = [
      { type: 'text', text: 'hi' },
      { type: 'text', text: 42 },
      { type: 'reasoning', text: 'r' },
    ] as unknown as ContentBlock[];
    expect(blocks.map(isTextBlock)).toEqual([true, false, false]);
  });
});

describe('stream chunks', () => {
  it('checks a known chunk type field by field, naming the field', () => {
    expect(StreamChunkSchema.safeParse({ type: 'text-delta', index: 0, text: 'a' }).success).toBe(true);
    const bad = StreamChunkSchema.safeParse({ type: 'text-delta', index: -1, text: 'a' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['index']);
    expect(StreamChunkSchema.safeParse({ type: 'finish', reason: { kind: 'max-tokens' } }).success).toBe(true);
    expect(StreamChunkSchema.safeParse({ type: 'finish', reason: {} }).success).toBe(false);
    expect(StreamChunkSchema.safeParse({ type: 'usage', usage: { inputTokens: 1 } }).success).toBe(false);
  });

  it('passes an unknown chunk type through unchanged', () => {
    const future = { type: 'citation-delta', index: 'x' };
    expect(StreamChunkSchema.safeParse(future)).toEqual({ success: true, data: future });
  });

  it('takes only a text-delta with string text for the streamed-text fallback', () => {
    const chunks = [
      { type: 'text-delta', index: 0, text: 'a' },
      { type: 'reasoning-delta', index: 0, text: 'r' },
      { type: 'text-delta', index: 0 },
    ] as unknown as StreamChunk[];
    expect(chunks.map(isTextDelta)).toEqual([true, false, false]);
  });
});
