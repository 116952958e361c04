/**
 * An editor-side client built on the official ACP SDK's client connection,
 * talking to the scripted ACP agent over real stdio: once directly, once
 * through `subagent-otel proxy`. The client must get exactly the same
 * messages both ways, and the proxied run must leave its spans.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_SUBAGENT_OUTPUT,
  ATTR_SUBAGENT_SOURCE,
  ATTR_SUBAGENT_STOP_REASON,
} from '../../src/telemetry/semconv.js';
import { attributes, readSpans } from '../helpers/cli.js';
import { CLI, FIXTURE_ACP_AGENT } from '../helpers/paths.js';

interface Transcript {
  initialize: unknown;
  session: unknown;
  updates: unknown[];
  permissions: unknown[];
  response: unknown;
  exit: { code: number | null; signal: NodeJS.Signals | null };
}

/** Runs one prompt turn as an editor would, against `argv` spawned with real pipes. */
async function editorTurn(argv: string[], scenario: string, env: NodeJS.ProcessEnv = {}): Promise<Transcript> {
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, ...env } });
  const exited = new Promise<Transcript['exit']>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const updates: unknown[] = [];
  const permissions: unknown[] = [];
  const stream = ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const connection = client({ name: 'editor' })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params);
      const allow = params.options.find((o) => o.kind === 'allow_once');
      return {
        outcome: allow !== undefined ? { outcome: 'selected', optionId: allow.optionId } : { outcome: 'cancelled' },
      };
    })
    .connect(stream);
  const initialize = await connection.agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  const session = await connection.agent.request(methods.agent.session.new, { cwd: '/tmp', mcpServers: [] });
  // A turn the agent fails is part of the transcript too: the error as the client received it.
  const response: unknown = await connection.agent
    .request(methods.agent.session.prompt, {
      sessionId: (session as { sessionId: string }).sessionId,
      prompt: [{ type: 'text', text: `scenario:${scenario}` }],
    })
    .catch((error: { code?: unknown; message?: unknown; data?: unknown }) => ({
      error: { code: error.code, message: error.message, data: error.data },
    }));
  connection.close();
  child.stdin.end();
  return { initialize, session, updates, permissions, response, exit: await exited };
}

describe('an ACP editor client through subagent-otel proxy', () => {
  it.each([
    'max-tokens',
    'thoughts',
    'permission',
    'refusal',
    'codex-output-limit',
    'claude-tool',
    'permission-inline',
  ])('gets exactly what it gets without the proxy (%s)', async (scenario) => {
    const out = join(mkdtempSync(join(tmpdir(), 'proxy-acp-')), 'otel');
    const direct = await editorTurn([process.execPath, FIXTURE_ACP_AGENT], scenario);
    const proxied = await editorTurn(
      [process.execPath, CLI, 'proxy', '--out', out, '--', process.execPath, FIXTURE_ACP_AGENT],
      scenario,
    );

    expect(proxied).toEqual(direct);
    expect(direct.updates.length).toBeGreaterThan(0);

    const runs = readSpans(out).filter((s) => s.name.startsWith('invoke_agent'));
    expect(runs).toHaveLength(1);
    expect(attributes(runs[0]!)[ATTR_SUBAGENT_SOURCE]).toBe('acp');
  });

  it('records the max-tokens turn with its partial text and its tool call', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'proxy-acp-')), 'otel');
    await editorTurn(
      [process.execPath, CLI, 'proxy', '--protocol', 'acp', '--out', out, '--', process.execPath, FIXTURE_ACP_AGENT],
      'max-tokens',
    );
    const spans = readSpans(out);
    const run = spans.find((s) => s.name.startsWith('invoke_agent'));
    expect(attributes(run!)).toMatchObject({
      [ATTR_SUBAGENT_STOP_REASON]: 'max-tokens',
      [ATTR_SUBAGENT_OUTPUT]: '[{"type":"text","text":"I found the config file. Reading it now."}]',
    });
    const tools = spans.filter((s) => s.name.startsWith('execute_tool'));
    expect(tools.map((s) => attributes(s)[ATTR_GEN_AI_TOOL_NAME])).toEqual(['read_file']);
    expect(tools[0]?.parentSpanId).toBe(run?.spanId);
  });
});

describe('the proxy records what real agents send (scripted shapes)', () => {
  async function proxiedSpans(scenario: string) {
    const out = join(mkdtempSync(join(tmpdir(), 'proxy-acp-')), 'otel');
    const transcript = await editorTurn(
      [process.execPath, CLI, 'proxy', '--protocol', 'acp', '--out', out, '--', process.execPath, FIXTURE_ACP_AGENT],
      scenario,
    );
    const spans = readSpans(out);
    return {
      transcript,
      run: spans.find((s) => s.name.startsWith('invoke_agent')),
      tools: spans.filter((s) => s.name.startsWith('execute_tool')),
    };
  }

  it('a codex-style output-limit error: the client gets the error, the span says max-tokens and why', async () => {
    const { transcript, run } = await proxiedSpans('codex-output-limit');
    expect(transcript.response).toMatchObject({ error: { code: -32603 } });
    expect(attributes(run!)).toMatchObject({
      [ATTR_SUBAGENT_STOP_REASON]: 'max-tokens',
      'subagent.stop_reason.inferred_from': 'codex-acp/max_output_tokens@1',
      'subagent.error.code': -32603,
      'subagent.error.message':
        'Internal error: stream disconnected before completion: Incomplete response returned, reason: max_output_tokens',
      'subagent.context_window.used': 1217,
      [ATTR_SUBAGENT_OUTPUT]: '[{"type":"text","text":"Here is the first part of a long"}]',
    });
  });

  it("claude-style tool: named Bash from _meta, with the editor's permission answer", async () => {
    const { tools } = await proxiedSpans('claude-tool');
    expect(tools.map((s) => attributes(s))).toMatchObject([
      {
        [ATTR_GEN_AI_TOOL_NAME]: 'Bash',
        'gen_ai.tool.type': 'execute',
        'subagent.tool.title': 'echo done',
        'subagent.tool.permission.outcome': 'allow_once',
        'subagent.tool.permission.option_id': 'allow',
      },
    ]);
  });

  it('gemini-style inline permission: the tool gets its span from the permission request alone', async () => {
    const { tools } = await proxiedSpans('permission-inline');
    // The agent names no tool (only a title, a command line): no gen_ai.tool.name, a plain span name.
    expect(
      tools.map((s) => [
        s.name,
        attributes(s)[ATTR_GEN_AI_TOOL_NAME],
        attributes(s)['subagent.tool.title'],
        attributes(s)['gen_ai.tool.call.id'],
        attributes(s)['subagent.tool.permission.outcome'],
      ]),
    ).toEqual([['execute_tool', undefined, 'echo done', 'run_shell_command_1', 'allow_once']]);
  });
});
