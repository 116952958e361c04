/**
 * A signal never costs a finished run: `proxy --agent-telemetry` in front of
 * the scripted ACP agent (`dist/fixtures/acp-agent.js`, over a real stdio
 * pipe with the official SDK on both ends), signalled at each phase a client
 * may choose: mid-turn, right after a turn's answer while the runs wait for
 * the agent's records, after the end of input while the agent lingers (as
 * codex-acp 2.6 does), and around the exit of an agent that flushes its
 * records when its input ends (as gemini-cli does). Each case asserts which
 * runs reached the trace file, how they were released (the proxy's summary
 * line) and the proxy's exit. The wait for records is set to 10 minutes, so
 * a run that waited it out would never arrive within the test.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startPeer, type AcpPeer } from '../agents/acp-driver.js';
import { attributes, readSpans, type OtlpSpan } from '../helpers/cli.js';
import { CLI, FIXTURE_ACP_AGENT } from '../helpers/paths.js';

interface Proxied {
  readonly peer: AcpPeer;
  readonly out: string;
  readonly log: string;
}

async function proxied(agentEnv: NodeJS.ProcessEnv): Promise<Proxied> {
  const out = mkdtempSync(join(tmpdir(), 'proxy-signals-'));
  const log = join(out, 'proxy.log');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...agentEnv,
    SUBAGENT_OTEL_LOG_FILE: log,
    SUBAGENT_OTEL_AGENT_TELEMETRY_WAIT_MS: '600000',
    OTEL_TRACES_EXPORTER: 'none',
    OTEL_METRICS_EXPORTER: 'none',
  };
  const peer = await startPeer(
    [
      process.execPath,
      CLI,
      'proxy',
      '--protocol',
      'acp',
      '--agent-telemetry',
      '--out',
      out,
      '--',
      process.execPath,
      FIXTURE_ACP_AGENT,
    ],
    env,
    out,
  );
  return { peer, out, log };
}

/** Plays one prompt per new session; returns the session ids in order. */
async function play(peer: AcpPeer, cwd: string, prompts: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const text of prompts) {
    const id = await peer.newSession(cwd);
    const turn = await peer.prompt(id, text);
    expect(turn.error, JSON.stringify(turn.error)).toBeUndefined();
    ids.push(id);
  }
  return ids;
}

function runs(out: string): OtlpSpan[] {
  return readSpans(out)
    .filter((s) => s.name.startsWith('invoke_agent'))
    .sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
}

/** Per run, in order: its session, stop reason and `subagent.agent_telemetry`. */
function summary(out: string): Array<[unknown, unknown, unknown]> {
  return runs(out).map((s) => {
    const a = attributes(s);
    return [a['gen_ai.conversation.id'], a['subagent.stop_reason'], a['subagent.agent_telemetry']];
  });
}

/** The causes the proxy's summary line gives for releasing held runs, e.g. `{ signal: 3 }`. */
function releases(log: string): Record<string, number> {
  const line = readFileSync(log, 'utf8')
    .split('\n')
    .find((l) => l.includes('agent telemetry: took'));
  expect(line, readFileSync(log, 'utf8')).toBeDefined();
  const part = /held runs released: ([^;]*)/.exec(line ?? '')?.[1] ?? '';
  if (part === 'none') return {};
  return Object.fromEntries(part.split(', ').map((p) => [p.replace(/ \d+$/, ''), Number(/\d+$/.exec(p)?.[0])]));
}

const THREE = ['scenario:end_turn one', 'scenario:max-tokens two', 'scenario:end_turn three telemetry:max-tokens'];

describe('proxy --agent-telemetry and signals', () => {
  it('right after a turn answered, a SIGTERM passes every held run on: all three in the trace, then the agent is ended as before', async () => {
    const { peer, out, log } = await proxied({});
    const ids = await play(peer, out, THREE);
    // The agent reports nothing (codex-acp 2.6): with a 10-minute wait each run is still held here.
    peer.signal('SIGTERM');
    const exit = await peer.close();
    // The agent died of the forwarded SIGTERM; the proxy dies of the same signal, after exporting.
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(summary(out)).toEqual([
      [ids[0], 'completed', 'none'],
      [ids[1], 'max-tokens', 'none'],
      [ids[2], 'completed', 'none'],
    ]);
    expect(releases(log)).toEqual({ signal: 3 });
  }, 60_000);

  it('a signal mid-turn keeps the finished run and reports the cut one as an error with what it said', async () => {
    const { peer, out, log } = await proxied({});
    const [first] = await play(peer, out, ['scenario:end_turn one']);
    const id = await peer.newSession(out);
    // Never answered: the `cancelled` scenario waits for a cancel that does not come.
    const pending = peer.prompt(id, 'scenario:cancelled two').catch((error: unknown) => error);
    await until(() => peer.frames.some((f) => JSON.stringify(f.frame).includes('Starting the long task')));
    peer.signal('SIGTERM');
    const exit = await peer.close();
    await pending;
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(summary(out)).toEqual([
      [first, 'completed', 'none'],
      [id, 'error', 'none'],
    ]);
    // What it had said so far is its output, and its span is an error.
    const cut = runs(out)[1]!;
    expect(attributes(cut)['subagent.output']).toBe(JSON.stringify([{ type: 'text', text: 'Starting the long task' }]));
    expect(cut.status?.code).toBe(2);
    expect(releases(log)).toEqual({ signal: 1 });
  }, 60_000);

  it('a client that ends the input and signals 1 s later while the agent lingers gets every run', async () => {
    // codex-acp 2.6 stays about 2 s after its input ended; this one stays 30 s.
    const { peer, out, log } = await proxied({ FAKE_ACP_EXIT_DELAY_MS: '30000' });
    const ids = await play(peer, out, THREE);
    const exit = await peer.closeThenSignal(1000, 'SIGTERM');
    expect(exit).toEqual({ code: null, signal: 'SIGTERM', signalled: true });
    expect(summary(out).map(([session]) => session)).toEqual(ids);
    // Released by the signal, or by the end of input's shorter wait on a machine slow enough to reach it first.
    const causes = releases(log);
    expect(Object.keys(causes).every((c) => c === 'signal' || c === 'end-of-input')).toBe(true);
    expect(Object.values(causes).reduce((a, b) => a + b, 0)).toBe(3);
  }, 60_000);

  it('the wait does not hold the exit past the agent: a silent agent that exits after its input ended lets the proxy go at once', async () => {
    const { peer, out, log } = await proxied({ FAKE_ACP_EXIT_DELAY_MS: '1500' });
    const ids = await play(peer, out, THREE);
    // No signal at all: with a 10-minute wait, only the agent's exit (or the end of input) can release the runs.
    const exit = await peer.close();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(summary(out).map(([session, , joined]) => [session, joined])).toEqual(ids.map((id) => [id, 'none']));
    const causes = releases(log);
    expect(Object.keys(causes).every((c) => c === 'agent-exit' || c === 'end-of-input')).toBe(true);
    expect(Object.values(causes).reduce((a, b) => a + b, 0)).toBe(3);
  }, 60_000);

  it("a client that signals 8 s after the end of input, when the agent exits after 1.5 s, gets every run (codex-acp 2.6 and issue 32's client)", async () => {
    const { peer, out, log } = await proxied({ FAKE_ACP_EXIT_DELAY_MS: '1500' });
    const ids = await play(peer, out, THREE);
    const exit = await peer.closeThenSignal(8000, 'SIGTERM');
    // The proxy went with the agent, before the client's patience ran out; or, if it was still finishing, the
    // signal left its exit the agent's.
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
    expect(summary(out).map(([session]) => session)).toEqual(ids);
    expect(Object.values(releases(log)).reduce((a, b) => a + b, 0)).toBe(3);
  }, 60_000);

  it.each([
    ['not signalled', 60_000],
    ['signalled 1 s after the end of input', 1000],
  ])(
    'an agent that flushes its records when its input ends and exits: every run joined, exit 0 (%s)',
    async (_name, graceMs) => {
      const { peer, out, log } = await proxied({ FAKE_ACP_TELEMETRY: 'on-exit' });
      const ids = await play(peer, out, THREE);
      const exit = await peer.closeThenSignal(graceMs, 'SIGTERM');
      if (exit.signalled && exit.signal === 'SIGTERM') {
        // The agent had not exited 1 s after its input ended (a machine this busy): the signal reached it, and what
        // the issue promises is every finished run in the trace, whatever came of the records.
        expect(summary(out).map(([session]) => session)).toEqual(ids);
        return;
      }
      // The agent exits 0 on its own within milliseconds; a signal after that leaves the proxy's exit the agent's.
      expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
      expect(summary(out)).toEqual([
        [ids[0], 'completed', 'joined'],
        [ids[1], 'max-tokens', 'joined'],
        // The wire said end_turn; the agent's own record says the output limit cut it.
        [ids[2], 'max-tokens', 'joined'],
      ]);
      const causes = releases(log);
      expect(Object.values(causes).reduce((a, b) => a + b, 0)).toBe(3);
      expect(causes.answered ?? 0).toBeGreaterThanOrEqual(1);
    },
    60_000,
  );
});

/** Resolves once `condition` holds, checking every 20 ms; fails the test after 30 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
