/**
 * The real-agent comparison's one canonicalisation of codex-acp's tool output
 * (`clientView`): a streamed output chunk right before the command's end update
 * reads as the end update that carries the output, codex-acp's other form of
 * the same report. Updates are hand-written in codex-acp 2.6's shapes.
 */
import { describe, expect, it } from 'vitest';
import type { Turn } from './acp-driver.js';
import { clientView } from './real-agent-suite.js';

const S = 'e3b0c442-98fc-1c14-9afb-f4c8996fb924';
const chunk = (data: string): unknown => ({
  sessionId: S,
  update: { sessionUpdate: 'tool_call_update', toolCallId: 'call_1', _meta: { terminal_output_delta: { data, terminal_id: 'call_1' } } },
});
const end = (meta: Record<string, unknown>): unknown => ({
  sessionId: S,
  update: { sessionUpdate: 'tool_call_update', toolCallId: 'call_1', status: 'completed', _meta: { terminal_exit: { exit_code: 0, signal: null, terminal_id: 'call_1' }, ...meta } },
});
const turn = (updates: unknown[]): Turn => ({ sessionId: S, updates, permissions: [], response: { stopReason: 'end_turn' }, frames: [], text: '' });

describe('clientView and codex-acp tool output', () => {
  it('reads [chunk, chunk, end] as the end update carrying the whole output', () => {
    const merged = end({ terminal_output_delta: { data: 'tool-ran\n', terminal_id: 'call_1' } });
    expect(clientView(turn([chunk('tool-'), chunk('ran\n'), end({})]))).toEqual(clientView(turn([merged])));
  });

  it('keeps a chunk that no end update of its tool call follows, and different output apart', () => {
    expect((clientView(turn([chunk('tool-ran\n')])) as { updates: unknown[] }).updates).toHaveLength(1);
    const merged = end({ terminal_output_delta: { data: 'other\n', terminal_id: 'call_1' } });
    expect(clientView(turn([chunk('tool-ran\n'), end({})]))).not.toEqual(clientView(turn([merged])));
  });
});
