/**
 * The content policy: resolution from options over environment, and the
 * output attributes under capture off, length caps and redaction. Hashes are
 * computed here with node:crypto over the literal JSON the test expects.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  TRUNCATION_MARKER,
  capJson,
  outputAttributes,
  resolveContentPolicyWithWarnings,
  resolveContentPolicy,
} from '../../src/telemetry/content-policy.js';
import { parseCaptureSetting } from '../../src/telemetry/config.js';
import {
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_SUBAGENT_OUTPUT,
  ATTR_SUBAGENT_OUTPUT_LENGTH,
  ATTR_SUBAGENT_OUTPUT_SHA256,
  ATTR_SUBAGENT_OUTPUT_SOURCE,
  ATTR_SUBAGENT_OUTPUT_TRUNCATED,
} from '../../src/telemetry/semconv.js';
import type { ContentBlock } from '../../src/wire/content.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('resolveContentPolicy', () => {
  it.each([
    [undefined, true],
    ['', true],
    ['true', true],
    ['TRUE', true],
    ['1', true],
    ['SPAN_ONLY', true],
    ['span_and_event', true],
    ['false', false],
    [' False ', false],
    ['0', false],
    ['NO_CONTENT', false],
    ['EVENT_ONLY', false],
    ['off', false],
    ['none', false],
    ['No', false],
    ['garbage', false],
  ])('reads OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=%j as capture %j', (raw, capture) => {
    expect(resolveContentPolicy(undefined, { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: raw })).toEqual({
      capture,
    });
  });

  it('tells garbage apart from a decision', () => {
    expect(parseCaptureSetting('maybe')).toBeUndefined();
  });

  it('honours the attribute length limits, span-specific first, and fails closed on unusable ones', () => {
    expect(resolveContentPolicy(undefined, { OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '4096' })).toEqual({
      capture: true,
      maxLength: 4096,
    });
    expect(
      resolveContentPolicy(undefined, {
        OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '4096',
        OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '512',
      }),
    ).toEqual({
      capture: true,
      maxLength: 512,
    });
    expect(resolveContentPolicy(undefined, { OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: 'lots' })).toEqual({ capture: false });
    expect(resolveContentPolicy(undefined, { OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '-5' })).toEqual({ capture: false });
    expect(resolveContentPolicy(undefined, { OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '0' })).toEqual({ capture: false });
    expect(
      resolveContentPolicy(undefined, {
        OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '0',
        OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '64',
      }),
    ).toEqual({ capture: false });
  });

  it('treats a cap of 0 as no content and an unusable cap as no content with a warning', () => {
    expect(resolveContentPolicyWithWarnings({ maxLength: 0 }, {})).toEqual({
      policy: { capture: false },
      warnings: [],
    });
    expect(resolveContentPolicyWithWarnings({ maxLength: -3 }, {})).toEqual({
      policy: { capture: false },
      warnings: ['content maxLength -3 is not a whole number; no output content is recorded'],
    });
    expect(
      resolveContentPolicyWithWarnings(undefined, { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'maybe' })
        .warnings,
    ).toEqual([
      'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="maybe" is not one of true, false, 1, 0, on, off, yes, no, none, NO_CONTENT, SPAN_ONLY, EVENT_ONLY, SPAN_AND_EVENT; no output content is recorded',
    ]);
  });

  it('lets options override the environment', () => {
    const redact = (json: string): string => json;
    expect(
      resolveContentPolicy(
        { capture: true, maxLength: 100, redact },
        { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'false', OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '10' },
      ),
    ).toEqual({ capture: true, maxLength: 100, redact });
    expect(resolveContentPolicy({ capture: false }, {})).toEqual({ capture: false });
  });
});

describe('outputAttributes', () => {
  it.each([
    ['no output', undefined],
    ['an empty output', [] as ContentBlock[]],
  ])('leaves gen_ai.output.messages out when there is %s, and still records subagent.output', (_what, output) => {
    expect(outputAttributes(output, 'none', { capture: true }, 'stop')).toEqual({
      [ATTR_SUBAGENT_OUTPUT]: '[]',
      [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'none',
      [ATTR_SUBAGENT_OUTPUT_SHA256]: '4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945',
      [ATTR_SUBAGENT_OUTPUT_LENGTH]: 2,
    });
  });

  const output: ContentBlock[] = [
    { type: 'reasoning', text: 'think' },
    { type: 'text', text: 'the answer' },
    { type: 'tool-call', id: 'c1', name: 'grep', arguments: '{"q":"x"}' },
    { type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'hit' }] },
    { type: 'image', attachment: { id: 'img-1' } },
  ];
  const outputJson =
    '[{"type":"reasoning","text":"think"},{"type":"text","text":"the answer"},{"type":"tool-call","id":"c1","name":"grep","arguments":"{\\"q\\":\\"x\\"}"},' +
    '{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"hit"}]},{"type":"image","attachment":{"id":"img-1"}}]';

  it('maps every block kind to a GenAI message part and keeps the output JSON exact', () => {
    expect(outputAttributes(output, 'message', { capture: true }, 'stop')).toEqual({
      [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'message',
      [ATTR_SUBAGENT_OUTPUT_SHA256]: sha256(outputJson),
      [ATTR_SUBAGENT_OUTPUT_LENGTH]: 273,
      [ATTR_SUBAGENT_OUTPUT]: outputJson,
      [ATTR_GEN_AI_OUTPUT_MESSAGES]:
        '[{"role":"assistant","parts":[{"type":"reasoning","content":"think"},{"type":"text","content":"the answer"},' +
        '{"type":"tool_call","id":"c1","name":"grep","arguments":"{\\"q\\":\\"x\\"}"},' +
        '{"type":"tool_call_response","id":"c1","response":[{"type":"text","text":"hit"}]},' +
        '{"type":"image","attachment":{"id":"img-1"}}],"finish_reason":"stop"}]',
    });
  });

  it('records no content at all with capture off, but hash, length and source', () => {
    expect(outputAttributes([{ type: 'text', text: 'private words' }], 'stream', { capture: false }, 'length')).toEqual(
      {
        [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'stream',
        [ATTR_SUBAGENT_OUTPUT_SHA256]: sha256('[{"type":"text","text":"private words"}]'),
        [ATTR_SUBAGENT_OUTPUT_LENGTH]: 40,
      },
    );
  });

  it('caps long content to the limit keeping valid JSON, marks it, and hashes the full output', () => {
    const long = 'x'.repeat(500);
    const attributes = outputAttributes(
      [{ type: 'text', text: long }],
      'message',
      { capture: true, maxLength: 120 },
      'length',
    );
    const fullJson = '[{"type":"text","text":"' + long + '"}]';
    expect(attributes[ATTR_SUBAGENT_OUTPUT_SHA256]).toBe(sha256(fullJson));
    expect(attributes[ATTR_SUBAGENT_OUTPUT_LENGTH]).toBe(527);
    expect(attributes[ATTR_SUBAGENT_OUTPUT_TRUNCATED]).toBe(true);
    expect(attributes[ATTR_SUBAGENT_OUTPUT]).toBe('[{"type":"text","text":"' + 'x'.repeat(79) + '...[truncated]"}]');
    const messages = attributes[ATTR_GEN_AI_OUTPUT_MESSAGES] as string;
    expect(messages.length).toBeLessThanOrEqual(120);
    expect(JSON.parse(messages)).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'text', content: expect.stringMatching(/^x+\.\.\.\[truncated\]$/) }],
        finish_reason: 'length',
      },
    ]);
  });

  it('shortens the longest fields first and never splits a surrogate pair or an escape', () => {
    const blocks: ContentBlock[] = [
      { type: 'text', text: 'short' },
      { type: 'text', text: '😀'.repeat(200) },
      { type: 'text', text: '"\n\\'.repeat(100) },
    ];
    for (const limit of [130, 201, 333, 600]) {
      const capped = capJson(blocks, limit);
      expect(capped?.truncated).toBe(true);
      expect(capped?.json.length).toBeLessThanOrEqual(limit);
      expect(capped?.json).not.toMatch(LONE_SURROGATE);
      const parsed = JSON.parse(capped?.json ?? 'null') as { text: string }[];
      expect(parsed.map((b) => b.text === 'short' || b.text === '' || b.text.endsWith(TRUNCATION_MARKER))).toEqual([
        true,
        true,
        true,
      ]);
      expect(parsed[0]?.text).toBe('short');
      expect(parsed[1]?.text.endsWith(TRUNCATION_MARKER)).toBe(true);
    }
    expect(capJson(blocks, 130)?.json).toBe(
      '[{"type":"text","text":"short"},{"type":"text","text":"😀😀😀😀...[truncated]"},{"type":"text","text":"\\"\\n\\\\\\"...[truncated]"}]',
    );
  });

  it('levels the longest fields down to a common length and leaves shorter fields whole', () => {
    const blocks: ContentBlock[] = [
      { type: 'text', text: 'a'.repeat(100) },
      { type: 'text', text: 'b'.repeat(50) },
      { type: 'text', text: 'c'.repeat(10) },
    ];
    expect(JSON.stringify(blocks).length).toBe(239);
    expect(capJson(blocks, 150)).toEqual({
      json:
        '[{"type":"text","text":"' +
        'a'.repeat(16) +
        '...[truncated]"},{"type":"text","text":"' +
        'b'.repeat(16) +
        '...[truncated]"},{"type":"text","text":"cccccccccc"}]',
      truncated: true,
    });
  });

  it('drops trailing blocks when emptied fields still do not fit, and leaves out what cannot fit at all', () => {
    const blocks: ContentBlock[] = [
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
      { type: 'text', text: 'c' },
    ];
    expect(capJson(blocks, 30)).toEqual({ json: '[{"type":"text","text":""}]', truncated: true });
    expect(capJson(blocks, 1)).toBeUndefined();
    const attributes = outputAttributes(blocks, 'message', { capture: true, maxLength: 1 }, 'stop');
    expect(attributes[ATTR_SUBAGENT_OUTPUT]).toBeUndefined();
    expect(attributes[ATTR_GEN_AI_OUTPUT_MESSAGES]).toBeUndefined();
    expect(attributes[ATTR_SUBAGENT_OUTPUT_TRUNCATED]).toBe(true);
  });

  it('lets the redaction hook see the content first and still hashes the unredacted output', () => {
    const seen: string[] = [];
    const redact = (json: string): string => {
      seen.push(json);
      return json.replaceAll('sk-live-42', '[REDACTED]');
    };
    const attributes = outputAttributes(
      [{ type: 'text', text: 'key is sk-live-42' }],
      'message',
      { capture: true, redact },
      'stop',
    );
    expect(seen).toEqual(['[{"type":"text","text":"key is sk-live-42"}]']);
    expect(attributes).toEqual({
      [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'message',
      [ATTR_SUBAGENT_OUTPUT_SHA256]: sha256('[{"type":"text","text":"key is sk-live-42"}]'),
      [ATTR_SUBAGENT_OUTPUT_LENGTH]: 44,
      [ATTR_SUBAGENT_OUTPUT]: '[{"type":"text","text":"key is [REDACTED]"}]',
      [ATTR_GEN_AI_OUTPUT_MESSAGES]:
        '[{"role":"assistant","parts":[{"type":"text","content":"key is [REDACTED]"}],"finish_reason":"stop"}]',
    });
  });

  it.each([
    [
      'throws',
      (): string => {
        throw new Error('redactor down');
      },
    ],
    ['returns text that is not JSON', (): string => 'REDACTED'],
    ['returns JSON that is not an array', (): string => '{"type":"text"}'],
  ])('records no content when the redaction hook %s, keeping hash and length', (_what, redact) => {
    expect(
      outputAttributes([{ type: 'text', text: 'sk-live-42' }], 'message', { capture: true, redact }, 'stop'),
    ).toEqual({
      [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'message',
      [ATTR_SUBAGENT_OUTPUT_SHA256]: sha256('[{"type":"text","text":"sk-live-42"}]'),
      [ATTR_SUBAGENT_OUTPUT_LENGTH]: 37,
    });
  });
});
