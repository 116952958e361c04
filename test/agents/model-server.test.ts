/**
 * The scripted model server's turn bookkeeping (a test fixture, tested on its
 * own because the real-agent comparisons depend on it): an agent's side
 * requests that quote the scenario marker are answered as side requests and
 * leave the turn's state (its step and the ids the agent passes on) alone;
 * the delegation scenarios tell a subagent's request from its parent's and
 * step each conversation by what it holds.
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
const PROMPT = {
  type: 'message',
  role: 'user',
  content: [{ type: 'input_text', text: 'scenario:tool#bookkeeping Please answer.' }],
};
const CALL = { type: 'function_call', name: 'exec_command', arguments: '{}', call_id: 'call_fixture_bookkeeping_1' };
const OUTPUT = { type: 'function_call_output', call_id: 'call_fixture_bookkeeping_1', output: 'tool-ran\n' };

/** codex-acp 2.6's title request: no top-level tools, an `additional_tools` item with nested ones, the first prompt quoted. */
const titleRequest = {
  model: 'gpt-5.6-luna',
  stream: true,
  input: [
    {
      type: 'additional_tools',
      role: 'developer',
      tools: [{ type: 'namespace', name: 'functions', tools: [SHELL_TOOL] }],
    },
    {
      type: 'message',
      role: 'user',
      content: [
        {
          type: 'input_text',
          text: "Generate a title.\n\nUser's first message:\nscenario:tool#bookkeeping Please answer.",
        },
      ],
    },
  ],
  text: { format: { type: 'json_schema', name: 'codex_output_schema', strict: true, schema: { type: 'object' } } },
};

/** POSTs `body` to the Responses endpoint and returns the raw event stream. */
async function responses(body: unknown): Promise<string> {
  const res = await fetch(`${server.origin}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return res.text();
}

describe('model server: side requests that quote the marker', () => {
  it("answers codex's title request as a side request, before and after the turn's requests, without shifting the turn's ids", async () => {
    const before = await responses(titleRequest);
    const call = await responses({ model: 'gpt-5.5', stream: true, tools: [SHELL_TOOL], input: [PROMPT] });
    const middle = await responses(titleRequest);
    const after = await responses({
      model: 'gpt-5.5',
      stream: true,
      tools: [SHELL_TOOL],
      input: [PROMPT, CALL, OUTPUT],
    });

    expect(server.requests.map((r) => `${r.scenario ?? '-'} ${r.answered}`)).toEqual([
      'tool side',
      'tool tool-call',
      'tool side',
      'tool after-tool',
    ]);
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
    expect(server.requests.slice(count).map((r) => `${r.dialect} ${r.scenario ?? '-'} ${r.answered}`)).toEqual([
      'anthropic normal side',
    ]);
  });

  it("answers Claude Code's prompt suggestion after a finished turn as a side request, and a later prompt of the session as a turn", async () => {
    const count = server.requests.length;
    const bash = { name: 'Bash', description: 'Run a command', input_schema: { type: 'object', properties: {} } };
    const prompt = { role: 'user', content: [{ type: 'text', text: 'scenario:tool#suggestion Please answer.' }] };
    const call = {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'toolu_fixture_suggestion_1', name: 'Bash', input: { command: 'echo tool-ran' } },
      ],
    };
    const result = {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_fixture_suggestion_1', content: 'tool-ran' }],
    };
    const answer = { role: 'assistant', content: [{ type: 'text', text: 'The tool said: done.' }] };
    // What Claude Code 2.1 sends after the turn: the finished conversation, the same tools, its own instruction last.
    const suggestion = {
      role: 'user',
      content: '[SUGGESTION MODE: Suggest what the user might naturally type next into Claude Code.]',
    };
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

describe('model server: delegation scenarios', () => {
  const agentTool = {
    name: 'Agent',
    description: 'Launch a subagent',
    input_schema: { type: 'object', properties: {} },
  };
  const messages = async (list: unknown[], system = ''): Promise<string> => {
    const res = await fetch(`${server.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-opus-5-5', stream: true, messages: list, system, tools: [agentTool] }),
    });
    expect(res.status).toBe(200);
    return res.text();
  };

  it("plays Claude Code's background delegation: the Agent call, the subagent's answer, the interim answer, the last answer after the notification", async () => {
    const count = server.requests.length;
    const prompt = { role: 'user', content: [{ type: 'text', text: 'scenario:delegate-bg#unit-bg Please delegate.' }] };
    const call = await messages([prompt]);
    // The call's input, as the stream's one input_json_delta carries it.
    const literal = /"partial_json":("(?:[^"\\]|\\.)*")/.exec(call)?.[1] ?? '"{}"';
    const input = JSON.parse(JSON.parse(literal) as string) as Record<string, unknown>;
    expect(input).toEqual({
      description: 'Count the files',
      prompt: 'Count the files in this folder. child:answer#unit-bg',
      subagent_type: 'general-purpose',
      run_in_background: true,
    });
    // The subagent's own request: its first message is the prompt its parent wrote.
    const child = await messages([{ role: 'user', content: [{ type: 'text', text: input.prompt }] }]);
    const useCall = {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_fixture_unit-bg_1', name: 'Agent', input }],
    };
    const launched = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_fixture_unit-bg_1', content: 'Async agent launched successfully.' },
      ],
    };
    // The tool descriptions name `<task-notification>`: only the conversation counts.
    const interim = await messages([prompt, useCall, launched], 'You will get a <task-notification> when it ends.');
    const waiting = { role: 'assistant', content: [{ type: 'text', text: 'The subagent is working.' }] };
    const notification = {
      role: 'user',
      content:
        '<task-notification>\n<status>completed</status>\n<result>The subagent found 7 files.</result>\n</task-notification>',
    };
    const last = await messages([prompt, useCall, launched, waiting, notification]);

    expect(server.requests.slice(count).map((r) => `${r.scenario ?? '-'} ${r.nonce ?? '-'} ${r.answered}`)).toEqual([
      'delegate-bg unit-bg delegate-call',
      '- unit-bg child-answer',
      'delegate-bg unit-bg waiting',
      'delegate-bg unit-bg delegated',
    ]);
    expect(child).toContain('"usage":{"output_tokens":11}');
    expect(child).toContain('"text":"7 files."');
    expect(interim).toContain('"text":"is working."');
    expect(last).toContain('"text":"reported back."');
  });

  it('cuts the subagent of a delegate-cut scenario at its output limit on every request, retries included', async () => {
    const count = server.requests.length;
    const child = {
      role: 'user',
      content: [{ type: 'text', text: 'Count the files in this folder. child:cut#unit-cut' }],
    };
    const first = await messages([child]);
    const retry = await messages([
      child,
      { role: 'assistant', content: [{ type: 'text', text: 'Here is the first part of a long' }] },
      { role: 'user', content: 'Output token limit hit. Resume directly.' },
    ]);
    expect([first, retry].map((s) => s.includes('"stop_reason":"max_tokens"'))).toEqual([true, true]);
    expect(server.requests.slice(count).map((r) => r.answered)).toEqual(['child-truncated', 'child-truncated']);
  });

  it("plays Codex's deferred multi-agent tools: tool_search, then spawn_agent and wait_agent in their namespace", async () => {
    const count = server.requests.length;
    const prompt = {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'scenario:delegate#unit-codex Please delegate.' }],
    };
    const search = {
      type: 'tool_search_call',
      call_id: 'call_fixture_unit-codex_1',
      execution: 'client',
      arguments: { query: 'spawn agent' },
    };
    const found = { type: 'tool_search_output', call_id: 'call_fixture_unit-codex_1', execution: 'client', tools: [] };
    const spawn = {
      type: 'function_call',
      name: 'spawn_agent',
      namespace: 'multi_agent_v1',
      arguments: '{}',
      call_id: 'call_fixture_unit-codex_2',
    };
    const spawned = {
      type: 'function_call_output',
      call_id: 'call_fixture_unit-codex_2',
      output: '{"agent_id":"child-thread-1","nickname":"Noether"}',
    };
    const shell = { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } };
    const turn = async (input: unknown[]): Promise<string> =>
      responses({ model: 'gpt-5.5', stream: true, tools: [shell], input });

    expect(await turn([prompt])).toContain('"type":"tool_search_call"');
    const spawnCall = await turn([prompt, search, found]);
    expect(spawnCall).toContain('"name":"spawn_agent","namespace":"multi_agent_v1"');
    expect(spawnCall).toContain('child:answer#unit-codex');
    const waitCall = await turn([prompt, search, found, spawn, spawned]);
    expect(waitCall).toContain('"name":"wait_agent","namespace":"multi_agent_v1"');
    expect(waitCall).toContain('\\"targets\\":[\\"child-thread-1\\"]');
    expect(server.requests.slice(count).map((r) => r.answered)).toEqual(['search-call', 'delegate-call', 'wait-call']);
  });
});
