/**
 * Where the waterfall shows a child run (`delegatingToolCalls`, decision
 * 0117): a child `invoke_agent` span whose recorded parent is an
 * `invoke_agent` span goes under the `execute_tool` sibling that was running
 * when it started (1 ms of slack either side), the latest-started one when
 * several were; spans already under a tool call are left alone.
 */
import { describe, expect, it } from 'vitest';
import { delegatingToolCalls, type TreeSpan } from '../../src/view/trace-tree.js';

const span = (spanId: string, operation: string, start: number, end: number, parentSpanId?: string): TreeSpan => ({
  spanId,
  operation,
  start,
  end,
  ...(parentSpanId !== undefined ? { parentSpanId } : {}),
});

describe('delegatingToolCalls', () => {
  it('places a child under the tool call running when it started, the latest-started of several', () => {
    const spans = [
      span('root', 'invoke_agent', 0, 100),
      span('early', 'execute_tool', 10, 90, 'root'),
      span('late', 'execute_tool', 20, 80, 'root'),
      span('done', 'execute_tool', 1, 5, 'root'),
      span('child', 'invoke_agent', 30, 70, 'root'),
    ];
    expect(delegatingToolCalls(spans)).toEqual(new Map([['child', 'late']]));
  });

  it('allows one millisecond either side, and no more', () => {
    const within = [
      span('root', 'invoke_agent', 0, 100),
      span('tool', 'execute_tool', 31, 40, 'root'),
      span('child', 'invoke_agent', 30, 70, 'root'),
    ];
    expect(delegatingToolCalls(within).get('child')).toBe('tool');
    const ended = [
      span('root', 'invoke_agent', 0, 100),
      span('tool', 'execute_tool', 10, 28, 'root'),
      span('child', 'invoke_agent', 30, 70, 'root'),
    ];
    expect(delegatingToolCalls(ended).size).toBe(0);
  });

  it('leaves a child already parented to a tool call, a root run, and a tool call of another run', () => {
    const spans = [
      span('root', 'invoke_agent', 0, 100),
      span('tool', 'execute_tool', 10, 90, 'root'),
      span('under-tool', 'invoke_agent', 20, 30, 'tool'),
      span('other', 'invoke_agent', 0, 100),
      span('other-tool', 'execute_tool', 10, 90, 'other'),
      span('lonely', 'invoke_agent', 0, 10),
    ];
    expect(delegatingToolCalls(spans).size).toBe(0);
  });
});
