/**
 * Content blocks, stream chunks and token usage of the dsh wire vocabulary
 * (docs/PROTOCOLS.md section 1): TypeScript types and the schemas that validate them.
 * Unknown block and chunk types are accepted and kept verbatim (they are
 * merge-extensible). A content block of a known type whose fields do not
 * match is kept too, as an opaque block (it makes its message non-empty and
 * contributes no text): one odd block never hides a whole message. A known
 * chunk type with a wrong field is rejected.
 *
 * @module subagent-otel/wire/content
 */
import * as z from 'zod';
import { withPlainCheck, withTypeDispatch } from './schema-check.js';

const nonNegativeInt = z.number().int().nonnegative();
/**
 * A token count as sent: any JSON number. Out-of-range values (negative,
 * fractional, beyond 2^53, `1e400` read as Infinity) are no reason to drop the
 * message that carries them; consumers clamp them with {@link clampTokenCount}.
 */
const isTokenCount = (value: unknown): boolean => typeof value === 'number' && !Number.isNaN(value);
const tokenCount = withPlainCheck(z.custom<number>(isTokenCount, { message: 'expected a number' }), isTokenCount);

/**
 * Token usage of one model call. The input buckets are disjoint
 * (`inputTokens` is uncached input only); `outputTokens` includes the
 * reasoning tokens, of which `reasoningTokens` is the share (docs/PROTOCOLS.md
 * section 1). Other fields are kept. Validated counts are numbers,
 * not necessarily in range: read them through {@link normalizeUsage}.
 */
export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens?: number | undefined;
  readonly cacheWriteTokens?: number | undefined;
  readonly reasoningTokens?: number | undefined;
  /**
   * Transcripts only (never on the dsh wire): the part of `cacheWriteTokens`
   * written with a one-hour lifetime, which Anthropic prices apart from
   * five-minute writes (Claude Code's `cache_creation.ephemeral_1h_input_tokens`).
   */
  readonly cacheWrite1hTokens?: number | undefined;
  readonly [field: string]: unknown;
}

/** Validates a `TokenUsage`: every count a JSON number (clamped later, never a reason to drop the message). */
export const TokenUsageSchema: z.ZodType<TokenUsage> = z.looseObject({
  inputTokens: tokenCount,
  outputTokens: tokenCount,
  cacheReadTokens: tokenCount.optional(),
  cacheWriteTokens: tokenCount.optional(),
  reasoningTokens: tokenCount.optional(),
});

/**
 * A token count clamped into range: an integer in `0..Number.MAX_SAFE_INTEGER`
 * (negative and NaN give 0, fractions are floored, larger values and Infinity
 * give `MAX_SAFE_INTEGER`). Never throws.
 */
export function clampTokenCount(value: number): number {
  if (!(value > 0)) return 0;
  return value >= Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : Math.floor(value);
}

/** `usage` with every count clamped by {@link clampTokenCount} (absent optional counts stay absent). Never throws. */
export function normalizeUsage(usage: TokenUsage): TokenUsage {
  const optional = (value: number | undefined): number | undefined =>
    value === undefined ? undefined : clampTokenCount(value);
  const cacheReadTokens = optional(usage.cacheReadTokens);
  const cacheWriteTokens = optional(usage.cacheWriteTokens);
  const reasoningTokens = optional(usage.reasoningTokens);
  const cacheWrite1hTokens = optional(usage.cacheWrite1hTokens);
  return {
    inputTokens: clampTokenCount(usage.inputTokens),
    outputTokens: clampTokenCount(usage.outputTokens),
    ...(cacheReadTokens !== undefined ? { cacheReadTokens } : {}),
    ...(cacheWriteTokens !== undefined ? { cacheWriteTokens } : {}),
    ...(reasoningTokens !== undefined ? { reasoningTokens } : {}),
    ...(cacheWrite1hTokens !== undefined ? { cacheWrite1hTokens } : {}),
  };
}

export interface TextBlock {
  readonly type: 'text';
  readonly text: string;
}
export interface ReasoningBlock {
  readonly type: 'reasoning';
  readonly text: string;
}
export interface ImageBlock {
  readonly type: 'image';
  readonly attachment: unknown;
}
export interface ToolCallBlock {
  readonly type: 'tool-call';
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}
export interface ToolResultBlock {
  readonly type: 'tool-result';
  readonly toolCallId: string;
  readonly content: readonly ContentBlock[];
  readonly isError?: boolean;
}
/** A block of a type this version does not know; kept, and it still makes a message non-empty. */
export interface UnknownBlock {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** One block of message content. */
export type ContentBlock = TextBlock | ReasoningBlock | ImageBlock | ToolCallBlock | ToolResultBlock | UnknownBlock;

/**
 * A schema that validates objects by their `type` field: a known type is
 * checked against its own schema (issues keep their paths), any other type
 * passes as an unknown variant. One lookup per value instead of trying every
 * branch of a union.
 */
function byType<T>(known: Record<string, z.ZodType>, lenient = false): z.ZodType<T> {
  if (lenient) return z.looseObject({ type: z.string() }) as unknown as z.ZodType<T>;
  const refined = z.looseObject({ type: z.string() }).superRefine((value, ctx) => {
    const schema = Object.prototype.hasOwnProperty.call(known, value.type) ? known[value.type] : undefined;
    if (schema === undefined) return;
    const parsed = schema.safeParse(value);
    if (parsed.success) return;
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, input: undefined } as z.core.$ZodRawIssue);
  });
  // The refinement's code is not readable by `plainCheckOf`: the same rule, stated for it.
  return withTypeDispatch(refined, known) as unknown as z.ZodType<T>;
}

/**
 * Validates one content block: any object with a string `type`. Unknown
 * types pass as `UnknownBlock`; a known type with odd fields (an `image`
 * without `attachment`, a `text` whose `text` is not a string) is kept
 * verbatim and read defensively by every consumer ({@link isTextBlock}).
 */
export const ContentBlockSchema: z.ZodType<ContentBlock> = byType<ContentBlock>(
  {
    text: z.looseObject({ text: z.string() }),
    reasoning: z.looseObject({ text: z.string() }),
    image: z.looseObject({ attachment: z.unknown() }),
    'tool-call': z.looseObject({ id: z.string(), name: z.string(), arguments: z.string() }),
    'tool-result': z.looseObject({
      toolCallId: z.string(),
      get content(): z.ZodArray<z.ZodType<ContentBlock>> {
        return z.array(ContentBlockSchema);
      },
      isError: z.boolean().optional(),
    }),
  },
  true,
);

/** `true` for a text block. */
export function isTextBlock(block: ContentBlock): block is TextBlock {
  return block.type === 'text' && typeof (block as TextBlock).text === 'string';
}

export interface BlockStartChunk {
  readonly type: 'block-start';
  readonly index: number;
  readonly blockType: string;
}
export interface TextDeltaChunk {
  readonly type: 'text-delta';
  readonly index: number;
  readonly text: string;
}
export interface ReasoningDeltaChunk {
  readonly type: 'reasoning-delta';
  readonly index: number;
  readonly text: string;
}
export interface ToolCallDeltaChunk {
  readonly type: 'tool-call-delta';
  readonly index: number;
  readonly id: string;
  readonly name?: string;
  readonly argumentsDelta: string;
}
export interface BlockEndChunk {
  readonly type: 'block-end';
  readonly index: number;
  readonly block: ContentBlock;
}
export interface UsageChunk {
  readonly type: 'usage';
  readonly usage: TokenUsage;
}
/** Finish kinds of one model call; unknown kinds are kept as strings. */
export type FinishKind = 'stop' | 'tool-calls' | 'max-tokens' | 'aborted' | 'error' | (string & {});
export interface FinishChunk {
  readonly type: 'finish';
  readonly reason: {
    readonly kind: FinishKind;
    readonly failure?: { readonly message: string; readonly code: string };
  };
}
/** A chunk of a type this version does not know; ignored by every consumer. */
export interface UnknownChunk {
  readonly type: string;
  readonly [field: string]: unknown;
}

export type KnownStreamChunk =
  | BlockStartChunk
  | TextDeltaChunk
  | ReasoningDeltaChunk
  | ToolCallDeltaChunk
  | BlockEndChunk
  | UsageChunk
  | FinishChunk;
/** One streamed chunk of a model call. */
export type StreamChunk = KnownStreamChunk | UnknownChunk;

const index = nonNegativeInt;
const failureSchema = z.looseObject({ message: z.string(), code: z.string() });

/** Validates one stream chunk; unknown `type` values pass as `UnknownChunk`. */
export const StreamChunkSchema: z.ZodType<StreamChunk> = byType<StreamChunk>({
  'block-start': z.looseObject({ index, blockType: z.string() }),
  'text-delta': z.looseObject({ index, text: z.string() }),
  'reasoning-delta': z.looseObject({ index, text: z.string() }),
  'tool-call-delta': z.looseObject({ index, id: z.string(), name: z.string().optional(), argumentsDelta: z.string() }),
  'block-end': z.looseObject({ index, block: ContentBlockSchema }),
  usage: z.looseObject({ usage: TokenUsageSchema }),
  finish: z.looseObject({ reason: z.looseObject({ kind: z.string(), failure: failureSchema.optional() }) }),
});

/** `true` for a `text-delta` chunk: the only chunk kind that feeds the streamed-text fallback. */
export function isTextDelta(chunk: StreamChunk): chunk is TextDeltaChunk {
  return chunk.type === 'text-delta' && typeof (chunk as TextDeltaChunk).text === 'string';
}
