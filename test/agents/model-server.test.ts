/**
 * The scripted model server's turn bookkeeping (a test fixture, tested on its
 * own because the real-agent comparisons depend on it): an agent's side
 * requests that quote the scenario marker are answered as side requests and
 * leave the turn's state (its step and the ids the agent passes on) alone.
 * Bodies are hand-written in the shapes codex 0.166 (under codex-acp 2.6) and
 * Claude Code (under claude-agent-acp 0.101) send; no agent runs here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type ModelServer } from './model-server.js';

let server: ModelServer;
beforeAll(async () => {
  server = await startModelServer();
});
afterAll(async () => {
  await server.close();
});

const SHELL_TOOL = { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } };
const PROMPT = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'scenario:tool#bookkeeping Please answer.' }] };
const CALL = { type: 'function_call', name: 'exec_command', arguments: '{}', call_id: 'call_fixture_bookkeeping_1' };
const OUTPUT = { type: 'function_call_output', call_id: 'call_fixture_bookkeeping_1', output: 'tool-ran\n' };

/** codex-acp 2.6's title request: no top-level tools, an `additional_tools` item with nested ones, the first prompt quoted. */
const titleRequest = {
  model: 'gpt-5.6-luna',
  stream: true,
  input: [
    { type: 'additional_tools', role: 'developer', tools: [{ type: 'namespace', name: 'functions', tools: [SHELL_TOOL] }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: "Generate a title.\n\nUser's first message:\nscenario:tool#bookkeeping Please answer." }] },
  ],
  text: { format: { type: 'json_schema', name: 'codex_output_schema', strict: true, schema: { type: 'object' } } },
};

/** POSTs `body` to the Responses endpoint and returns the raw event stream. */
async function responses(body: unknown): Promise<string> {
  const res = await fetch(`${server.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return res.text();
}

describe('model server: side requests that quote the marker', () => {
  it("answers codex's title request as a side request, before and after the turn's requests, without shifting the turn's ids", async () => {
    const before = await responses(titleRequest);
    const call = await responses({ model: 'gpt-5.5', stream: true, tools: [SHELL_TOOL], input: [PROMPT] });
    const middle = await responses(titleRequest);
    const after = await responses({ model: 'gpt-5.5', stream: true, tools: [SHELL_TOOL], input: [PROMPT, CALL, OUTPUT] });

    expect(server.requests.map((r) => `${r.scenario ?? '-'} ${r.answered}`)).toEqual(['tool side', 'tool tool-call', 'tool side', 'tool after-tool']);
    expect(before).toContain('"delta":"ok"');
    expect(middle).toContain('"delta":"ok"');
    // The turn's own ids count only the turn's requests: the first and second of nonce `bookkeeping`.
    expect(call).toContain('"call_id":"call_fixture_bookkeeping_1"');
    expect(after).toContain('"id":"msg_fixture_bookkeeping_2"');
    expect(after).toContain('"delta":"The tool said: "');
  });

  it("answers Claude's request without top-level tools as a side request even when a nested value is named tools", async () => {
    const count = server.requests.length;
    const res = await fetch(`${server.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-haiku-4-5',
        stream: true,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'scenario:normal#claude-side Please answer.' }] }],
        metadata: { user_id: 'fixture', tools: [{ name: 'Bash' }] },
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"text":"ok"');
    expect(server.requests.slice(count).map((r) => `${r.dialect} ${r.scenario ?? '-'} ${r.answered}`)).toEqual(['anthropic normal side']);
  });

  it("answers Claude Code's prompt suggestion after a finished turn as a side request, and a later prompt of the session as a turn", async () => {
    const count = server.requests.length;
    const bash = { name: 'Bash', description: 'Run a command', input_schema: { type: 'object', properties: {} } };
    const prompt = { role: 'user', content: [{ type: 'text', text: 'scenario:tool#suggestion Please answer.' }] };
    const call = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_fixture_suggestion_1', name: 'Bash', input: { command: 'echo tool-ran' } }] };
    const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_fixture_suggestion_1', content: 'tool-ran' }] };
    const answer = { role: 'assistant', content: [{ type: 'text', text: 'The tool said: done.' }] };
    // What Claude Code 2.1 sends after the turn: the finished conversation, the same tools, its own instruction last.
    const suggestion = { role: 'user', content: '[SUGGESTION MODE: Suggest what the user might naturally type next into Claude Code.]' };
    const messages = async (list: unknown[]): Promise<string> => {
      const res = await fetch(`${server.origin}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'claude-sonnet-4-5', stream: true, tools: [bash], messages: list }),
      });
      expect(res.status).toBe(200);
      return res.text();
    };

    await messages([prompt]);
    await messages([prompt, call, result]);
    const side = await messages([prompt, call, result, answer, suggestion]);
    const next = { role: 'user', content: [{ type: 'text', text: 'scenario:normal#suggestion-next Please answer.' }] };
    const nextTurn = await messages([prompt, call, result, answer, next]);

    expect(server.requests.slice(count).map((r) => `${r.scenario ?? '-'} ${r.answered}`)).toEqual([
      'tool tool-call',
      'tool after-tool',
      'tool side',
      'normal normal',
    ]);
    expect(side).toContain('"text":"ok"');
    expect(nextTurn).toContain('"id":"msg_fixture_suggestion-next_1"');
  });
});
