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
  update: {
    sessionUpdate: 'tool_call_update',
    toolCallId: 'call_1',
    _meta: { terminal_output_delta: { data, terminal_id: 'call_1' } },
  },
});
const end = (meta: Record<string, unknown>): unknown => ({
  sessionId: S,
  update: {
    sessionUpdate: 'tool_call_update',
    toolCallId: 'call_1',
    status: 'completed',
    _meta: { terminal_exit: { exit_code: 0, signal: null, terminal_id: 'call_1' }, ...meta },
  },
});
const turn = (updates: unknown[]): Turn => ({
  sessionId: S,
  updates,
  permissions: [],
  response: { stopReason: 'end_turn' },
  frames: [],
  text: '',
});

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

describe('clientView and claude-agent-acp tool calls refined later', () => {
  // The two forms one CI run gave the same turn (claude-agent-acp 0.101, the tool scenario), direct and proxied.
  const meta = { claudeCode: { toolName: 'Bash' } };
  const input = { command: 'echo tool-ran | tee tool-ran.txt', description: 'Print a marker' };
  const content = [{ type: 'content', content: { type: 'text', text: 'Print a marker' } }];
  const update = (u: Record<string, unknown>): unknown => ({
    sessionId: S,
    update: { _meta: meta, toolCallId: 'toolu_1', ...u },
  });
  const bare = update({
    sessionUpdate: 'tool_call',
    content: [],
    kind: 'execute',
    name: 'Bash',
    rawInput: {},
    status: 'pending',
    title: 'Terminal',
  });
  const refine = update({ sessionUpdate: 'tool_call_update', content, rawInput: input, title: input.command });
  const whole = update({
    sessionUpdate: 'tool_call',
    content,
    kind: 'execute',
    name: 'Bash',
    rawInput: input,
    status: 'pending',
    title: input.command,
  });
  const done = update({ sessionUpdate: 'tool_call_update', status: 'completed' });

  it('reads an input-less tool_call and its refining update as the one tool_call with the input', () => {
    expect(clientView(turn([bare, refine, done]))).toEqual(clientView(turn([whole, done])));
  });

  it('keeps a refinement of other input, or of another call, apart', () => {
    const other = update({
      sessionUpdate: 'tool_call_update',
      content,
      rawInput: { command: 'rm -rf /' },
      title: input.command,
    });
    expect(clientView(turn([bare, other, done]))).not.toEqual(clientView(turn([whole, done])));
    const elsewhere = { sessionId: S, update: { ...(refine as { update: object }).update, toolCallId: 'toolu_2' } };
    expect((clientView(turn([bare, elsewhere])) as { updates: unknown[] }).updates).toHaveLength(2);
  });
});
