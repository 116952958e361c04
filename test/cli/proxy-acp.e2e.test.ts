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
import { ATTR_GEN_AI_TOOL_NAME, ATTR_SUBAGENT_OUTPUT, ATTR_SUBAGENT_SOURCE, ATTR_SUBAGENT_STOP_REASON } from '../../src/telemetry/semconv.js';
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
  const exited = new Promise<Transcript['exit']>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  const updates: unknown[] = [];
  const permissions: unknown[] = [];
  const stream = ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  const connection = client({ name: 'editor' })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params);
      const allow = params.options.find((o) => o.kind === 'allow_once');
      return { outcome: allow !== undefined ? { outcome: 'selected', optionId: allow.optionId } : { outcome: 'cancelled' } };
    })
    .connect(stream);
  const initialize = await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  const session = await connection.agent.request(methods.agent.session.new, { cwd: '/tmp', mcpServers: [] });
  const response = await connection.agent.request(methods.agent.session.prompt, {
    sessionId: (session as { sessionId: string }).sessionId,
    prompt: [{ type: 'text', text: `scenario:${scenario}` }],
  });
  connection.close();
  child.stdin.end();
  return { initialize, session, updates, permissions, response, exit: await exited };
}

describe('an ACP editor client through subagent-otel proxy', () => {
  it.each(['max-tokens', 'thoughts', 'permission', 'refusal'])('gets exactly what it gets without the proxy (%s)', async (scenario) => {
    const out = join(mkdtempSync(join(tmpdir(), 'proxy-acp-')), 'otel');
    const direct = await editorTurn([process.execPath, FIXTURE_ACP_AGENT], scenario);
    const proxied = await editorTurn([process.execPath, CLI, 'proxy', '--out', out, '--', process.execPath, FIXTURE_ACP_AGENT], scenario);

    expect(proxied).toEqual(direct);
    expect(direct.updates.length).toBeGreaterThan(0);

    const runs = readSpans(out).filter((s) => s.name.startsWith('invoke_agent'));
    expect(runs).toHaveLength(1);
    expect(attributes(runs[0]!)[ATTR_SUBAGENT_SOURCE]).toBe('acp');
  });

  it('records the max-tokens turn with its partial text and its tool call', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'proxy-acp-')), 'otel');
    await editorTurn([process.execPath, CLI, 'proxy', '--protocol', 'acp', '--out', out, '--', process.execPath, FIXTURE_ACP_AGENT], 'max-tokens');
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
