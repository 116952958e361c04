import { describe, expect, it } from 'vitest';
import { AssistantOutputFold, finalAssistantOutput } from '../../src/output/assistant-output.js';
import {
  attempt,
  events,
  finish,
  reasoning,
  reasoningDelta,
  step,
  text,
  textDelta,
  toolCall,
  toolCallEvent,
  toolDelta,
  toolResultEvent,
  turnEnd,
  turnStart,
  unknownEvent,
  usage,
  type Generation,
} from '../helpers/events.js';

describe.each<Generation>(['chunk', 'embedded'])('the one rule, %s log generation', (gen) => {
  it('keeps the streamed partial text when the last message is an empty usage-only message', () => {
    const run = events([
      turnStart(),
      step(gen, {
        stream: [
          textDelta('Partial answer '),
          textDelta('before the limit'),
          toolDelta('c1', '{"pa'),
          finish('max-tokens'),
        ],
        content: [],
        usage: usage(100, 4096),
      }),
      turnEnd('max-tokens'),
    ]);
    expect(finalAssistantOutput(run)).toEqual([{ type: 'text', text: 'Partial answer before the limit' }]);
  });

  it('keeps the earlier non-empty message when a multi-step max-tokens turn ends in a tool-only step', () => {
    const run = events([
      turnStart(),
      step(gen, {
        step: 0,
        stream: [
          textDelta('I will look '),
          textDelta('that up.'),
          toolDelta('call_1', '{"path":"a.txt"}'),
          finish('tool-calls'),
        ],
        content: [text('I will look that up.'), toolCall('call_1')],
        usage: usage(50, 20),
      }),
      toolCallEvent('call_1'),
      toolResultEvent('call_1'),
      step(gen, {
        step: 1,
        stream: [toolDelta('call_2', '{"pat'), finish('max-tokens')],
        content: [],
        usage: usage(80, 4096),
      }),
      turnEnd('max-tokens'),
    ]);
    expect(finalAssistantOutput(run)).toEqual([
      { type: 'text', text: 'I will look that up.' },
      { type: 'tool-call', id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' },
    ]);
  });

  it('reports the text of a cancelled child whose only text is in a failed attempt stream', () => {
    const run = events([
      turnStart(),
      attempt(gen, {
        stream: [textDelta('Working '), textDelta('on it')],
        failure: { message: 'aborted', code: 'aborted' },
      }),
      turnEnd('aborted', 0, { reason: { kind: 'parent' } }),
    ]);
    expect(finalAssistantOutput(run)).toEqual([{ type: 'text', text: 'Working on it' }]);
  });

  it('selects the last of several non-empty messages', () => {
    const run = events([
      step(gen, { step: 0, stream: [textDelta('first')], content: [text('first')] }),
      step(gen, { step: 1, stream: [textDelta('second')], content: [text('second')] }),
      step(gen, { step: 2, content: [] }),
    ]);
    expect(finalAssistantOutput(run)).toEqual([{ type: 'text', text: 'second' }]);
  });

  it('selects a reasoning-only message over streamed text, because the rule tests content length', () => {
    const run = events([
      attempt(gen, { step: 0, stream: [textDelta('streamed text')] }),
      step(gen, { step: 1, stream: [reasoningDelta('Let me think.')], content: [reasoning('Let me think.')] }),
    ]);
    expect(finalAssistantOutput(run)).toEqual([{ type: 'reasoning', text: 'Let me think.' }]);
  });

  it('does not let text streamed after a complete message replace it', () => {
    const run = events([
      step(gen, { step: 0, stream: [textDelta('complete answer')], content: [text('complete answer')] }),
      attempt(gen, { step: 1, stream: [textDelta('later text that was cut')] }),
      turnEnd('aborted'),
    ]);
    expect(finalAssistantOutput(run)).toEqual([{ type: 'text', text: 'complete answer' }]);
  });

  it('never counts reasoning deltas, tool-call deltas or tool-result content as output', () => {
    const run = events([
      step(gen, { step: 0, stream: [reasoningDelta('hidden thought'), toolDelta('c1', '{"x":1}')], content: [] }),
      toolCallEvent('c1'),
      toolResultEvent('c1'),
      turnEnd('max-tokens'),
    ]);
    expect(finalAssistantOutput(run)).toBeUndefined();
  });

  it('returns undefined when the child produced no output at all', () => {
    expect(
      finalAssistantOutput(events([turnStart(), step(gen, { content: [] }), turnEnd('completed')])),
    ).toBeUndefined();
    expect(finalAssistantOutput([])).toBeUndefined();
  });

  it('ignores events of unknown types', () => {
    const run = events([
      unknownEvent(),
      step(gen, { stream: [textDelta('ok')], content: [text('ok')] }),
      unknownEvent(),
    ]);
    expect(finalAssistantOutput(run)).toEqual([{ type: 'text', text: 'ok' }]);
  });
});

describe('AssistantOutputFold', () => {
  it('accumulates raw text pushed by a chunk-only transport', () => {
    const fold = new AssistantOutputFold();
    fold.pushText('Hello, ');
    fold.pushText('world');
    expect(fold.collect()).toEqual([{ type: 'text', text: 'Hello, world' }]);
    expect(fold.source).toBe('stream');
  });

  it('says where the selection came from and how many empty messages it skipped', () => {
    const fold = new AssistantOutputFold();
    expect(fold.source).toBe('none');
    for (const e of events([
      step('embedded', { stream: [textDelta('a')], content: [] }),
      step('embedded', { content: [] }),
    ]))
      fold.push(e);
    expect(fold.source).toBe('stream');
    expect(fold.emptyMessages).toBe(2);
    for (const e of events([step('embedded', { content: [text('done')] })])) fold.push(e);
    expect(fold.source).toBe('message');
    expect(fold.collect()).toEqual([{ type: 'text', text: 'done' }]);
  });

  it('treats a message with a block of an unknown type as non-empty', () => {
    const fold = new AssistantOutputFold();
    fold.pushText('streamed');
    for (const e of events([step('embedded', { content: [{ type: 'hologram', frames: 3 }] })])) fold.push(e);
    expect(fold.collect()).toEqual([{ type: 'hologram', frames: 3 }]);
  });

  it('takes streamed text until a non-empty message is folded, past empty ones', () => {
    const fold = new AssistantOutputFold();
    expect(fold.takesText).toBe(true);
    for (const e of events([step('embedded', { content: [] })])) fold.push(e);
    expect(fold.takesText).toBe(true);
    for (const e of events([step('embedded', { content: [text('done')] })])) fold.push(e);
    expect(fold.takesText).toBe(false);
    fold.pushText('late');
    expect(fold.collect()).toEqual([{ type: 'text', text: 'done' }]);
  });

  it('yields no output for text deltas that carry empty strings', () => {
    const fold = new AssistantOutputFold();
    fold.pushText('');
    for (const e of events([attempt('embedded', { stream: [textDelta('')] })])) fold.push(e);
    expect(fold.collect()).toBeUndefined();
  });
});
