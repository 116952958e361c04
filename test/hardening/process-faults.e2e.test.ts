/**
 * Process faults around the real `subagent-otel proxy`:
 *
 * - the agent crashes mid-run: the open run closes as `error` with the
 *   partial output it streamed, and is exported;
 * - the proxy gets SIGTERM or SIGINT: the signal reaches the child, the open
 *   run is exported (within the flush bound even while the collector hangs),
 *   and the proxy ends the way the child ended;
 * - the client closes stdin early: everything the agent still answers is
 *   forwarded and observed;
 * - the client stops reading: pipe backpressure pauses the agent, the proxy
 *   holds a bounded amount of the stream (checked against the agent's own
 *   progress and the proxy's RSS while the agent tries to write 200 MiB), no
 *   deadlock, and every byte arrives once reading resumes.
 *
 * Waits are on events: a line on stdout or stderr, a process exit.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ATTR_SUBAGENT_OUTPUT,
  ATTR_SUBAGENT_OUTPUT_SOURCE,
  ATTR_SUBAGENT_STOP_REASON,
} from '../../src/telemetry/semconv.js';
import { attributes, finished, rpc, spawnCli, waitForLine } from '../helpers/cli.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { FIXTURE_ACP_AGENT, FIXTURE_SDK_RUNTIME } from '../helpers/paths.js';
import {
  ECHO,
  SPANS_PER_RUN,
  droppedTotal,
  fileMetricPoints,
  fileSpans,
  openRun,
  rssKiB,
  scriptedRun,
} from './workload.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'process-faults-'));

const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});

function runSpans(out: string) {
  return fileSpans(out).filter((s) => s.name.startsWith('invoke_agent'));
}

describe('the agent crashes mid-run', () => {
  it('closes the open SDK run as error with its streamed partial output, exports it, and exits with the crash code', async () => {
    const dir = tmp();
    const out = join(dir, 'otel');
    const child = spawnCli(['proxy', '--out', out, '--', process.execPath, ECHO, join(dir, 'rec')], { ECHO_EXIT: '3' });
    const done = finished(child);
    child.stdin.end(scriptedRun(1) + openRun(2, 'half of the answer'));
    const r = await done;

    expect(r.code).toBe(3);
    const spans = runSpans(out);
    expect(spans.map((s) => attributes(s)[ATTR_SUBAGENT_STOP_REASON])).toEqual(['completed', 'error']);
    const crashed = spans[1]!;
    expect(attributes(crashed)).toMatchObject({
      [ATTR_SUBAGENT_OUTPUT]: '[{"type":"text","text":"half of the answer"}]',
      [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'stream',
      'error.type': 'error',
    });
    expect(crashed.status?.code).toBe(2);
  });

  it('closes the ACP turn of an agent that exits while streaming as error with the text it streamed', async () => {
    const out = join(tmp(), 'otel');
    const child = spawnCli(['proxy', '--out', out, '--', process.execPath, FIXTURE_ACP_AGENT]);
    const done = finished(child);
    child.stdin.write(rpc(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} }));
    await waitForLine(child, (l) => l.includes('"id":1'));
    child.stdin.write(rpc(2, 'session/new', { cwd: '/tmp', mcpServers: [] }));
    const created = JSON.parse(await waitForLine(child, (l) => l.includes('"id":2'))) as {
      result: { sessionId: string };
    };
    child.stdin.write(
      rpc(3, 'session/prompt', {
        sessionId: created.result.sessionId,
        prompt: [{ type: 'text', text: 'scenario:crash' }],
      }),
    );
    const r = await done;

    expect(r.code).toBe(3);
    const spans = runSpans(out);
    expect(spans).toHaveLength(1);
    expect(attributes(spans[0]!)).toMatchObject({
      [ATTR_SUBAGENT_STOP_REASON]: 'error',
      [ATTR_SUBAGENT_OUTPUT]: '[{"type":"text","text":"Working on it"}]',
      [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'stream',
    });
  });

  it('closes the turn of the real SDK runtime fixture that dies after its first step started as error', async () => {
    const out = join(tmp(), 'otel');
    const child = spawnCli(['proxy', '--out', out, '--', process.execPath, FIXTURE_SDK_RUNTIME], {
      FAKE_EXIT_AFTER_PROMPT: '9',
    });
    const done = finished(child);
    child.stdin.write(rpc(1, 'initialize', { cwd: '/', provider: 'deepseek', model: 'deepseek-chat' }));
    child.stdin.write(rpc(2, 'session/prompt', { sessionId: 's1', contentBlocks: [{ type: 'text', text: 'go' }] }));
    const r = await done;

    expect(r.code).toBe(9);
    // The prompt was acknowledged on queueing; the turn never ended.
    expect(r.stdout.toString()).toContain('"id":2,"result":{"messageId":"s1/user-0"}');
    expect(r.stdout.toString()).not.toContain('"turn/end"');
    const spans = runSpans(out);
    expect(spans.map((s) => attributes(s)[ATTR_SUBAGENT_STOP_REASON])).toEqual(['error']);
    expect(attributes(spans[0]!)[ATTR_SUBAGENT_OUTPUT_SOURCE]).toBe('none');
  });
});

describe('the proxy is signalled', () => {
  it('forwards SIGTERM, exports the open run within the flush bound while the collector hangs, and exits with the child code', async () => {
    const receiver = await startOtlpReceiver({ kind: 'hang' });
    receivers.push(receiver);
    const out = join(tmp(), 'otel');
    const child = spawnCli(['proxy', '--out', out, '--', process.execPath, ECHO, join(tmp(), 'rec')], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '10',
      SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '1500',
    });
    const done = finished(child);
    child.stdin.write(scriptedRun(1) + openRun(2, 'interrupted text'));
    await waitForLine(child, (l) => l.includes('interrupted text'));
    // The first run's spans reach the hung collector before the signal.
    await receiver.waitFor((q) => q.path === '/v1/traces');
    child.kill('SIGTERM');
    const r = await done;

    expect(r.code).toBe(42);
    expect(r.stderr.toString()).toContain('echo-child: got SIGTERM');
    const spans = runSpans(out);
    expect(spans.map((s) => attributes(s)[ATTR_SUBAGENT_STOP_REASON])).toEqual(['completed', 'error']);
    expect(attributes(spans[1]!)[ATTR_SUBAGENT_OUTPUT]).toBe('[{"type":"text","text":"interrupted text"}]');
    // Nothing reached the hung collector; every span is counted, none vanished.
    expect(droppedTotal(fileMetricPoints(out), 'traces', 'otlp')).toBe(2 * SPANS_PER_RUN);
  });

  it('forwards SIGINT, exports the open run, and dies by SIGINT like the child', async () => {
    const out = join(tmp(), 'otel');
    const child = spawnCli(['proxy', '--out', out, '--', process.execPath, ECHO, join(tmp(), 'rec')]);
    const done = finished(child);
    child.stdin.write(openRun(1, 'cut by ctrl-c'));
    await waitForLine(child, (l) => l.includes('cut by ctrl-c'));
    child.kill('SIGINT');
    const r = await done;

    expect(r.signal).toBe('SIGINT');
    expect(r.code).toBeNull();
    const spans = runSpans(out);
    expect(spans).toHaveLength(1);
    expect(attributes(spans[0]!)).toMatchObject({
      [ATTR_SUBAGENT_STOP_REASON]: 'error',
      [ATTR_SUBAGENT_OUTPUT]: '[{"type":"text","text":"cut by ctrl-c"}]',
    });
  });

  it('forwards SIGTERM to the real SDK runtime fixture in the middle of a hanging turn and dies by it', async () => {
    const dir = tmp();
    const out = join(dir, 'otel');
    const ready = join(dir, 'ready');
    const child = spawnCli(['proxy', '--out', out, '--', process.execPath, FIXTURE_SDK_RUNTIME], {
      FAKE_SCENARIO: 'hang',
      FAKE_READY_FILE: ready,
    });
    const done = finished(child);
    child.stdin.write(rpc(1, 'session/prompt', { sessionId: 's1', contentBlocks: [{ type: 'text', text: 'go' }] }));
    await waitForLine(child, (l) => l.includes('Thinking about'));
    child.kill('SIGTERM');
    const r = await done;

    expect(r.signal).toBe('SIGTERM');
    const spans = runSpans(out);
    expect(spans).toHaveLength(1);
    expect(attributes(spans[0]!)).toMatchObject({
      [ATTR_SUBAGENT_STOP_REASON]: 'error',
      [ATTR_SUBAGENT_OUTPUT]: '[{"type":"text","text":"Thinking about"}]',
    });
  });
});

describe('the client closes stdin early', () => {
  it('still forwards and observes every answer the runtime gives after the EOF', async () => {
    const out = join(tmp(), 'otel');
    const child = spawnCli(['proxy', '--out', out, '--', process.execPath, FIXTURE_SDK_RUNTIME]);
    const done = finished(child);
    child.stdin.end(
      rpc(1, 'initialize', { cwd: '/', provider: 'deepseek', model: 'deepseek-chat' }) +
        rpc(2, 'session/prompt', { sessionId: 's1', contentBlocks: [{ type: 'text', text: 'go' }] }) +
        rpc(3, 'session/prompt', {
          sessionId: 's2',
          contentBlocks: [{ type: 'text', text: 'scenario:empty-message' }],
        }),
    );
    const r = await done;

    expect(r.code).toBe(0);
    const answers = r.stdout
      .toString()
      .split('\n')
      .filter((l) => /"id":[23],"result"/.test(l));
    expect(answers).toEqual([
      '{"jsonrpc":"2.0","id":2,"result":{"messageId":"s1/user-0"}}',
      '{"jsonrpc":"2.0","id":3,"result":{"messageId":"s2/user-0"}}',
    ]);
    const outputs = runSpans(out).map((s) => [
      attributes(s)[ATTR_SUBAGENT_STOP_REASON],
      attributes(s)[ATTR_SUBAGENT_OUTPUT],
    ]);
    expect(outputs.sort()).toEqual([
      ['completed', '[{"type":"text","text":"The answer is 42."}]'],
      ['max-tokens', '[{"type":"text","text":"Partial answer before the limit"}]'],
    ]);
  });
});

/**
 * A peer that writes TOTAL bytes of NDJSON to stdout as fast as the pipe
 * takes them, honouring backpressure. Each time a write is refused it says
 * `stall <bytes accepted so far>` on stderr; at the end `done <total> <sha256>`.
 */
const WRITER = String.raw`
const { createHash } = require('node:crypto');
const TOTAL = Number(process.env.WRITER_TOTAL);
const hash = createHash('sha256');
let written = 0, n = 0;
function next() {
  while (written < TOTAL) {
    const head = '{"jsonrpc":"2.0","method":"noise/bulk","params":"' + String(n++).padStart(8, '0');
    const size = Math.min(65536, TOTAL - written);
    const line = Buffer.from(head + 'x'.repeat(Math.max(0, size - head.length - 3)) + '"}\n');
    written += line.length; hash.update(line);
    if (!process.stdout.write(line)) {
      process.stderr.write('stall ' + written + '\n');
      process.stdout.once('drain', next);
      return;
    }
  }
  process.stdout.write('', () => process.stderr.write('done ' + written + ' ' + hash.digest('hex') + '\n'));
}
next();
`;

describe('the client stops reading', () => {
  it('pauses the agent through backpressure and holds a bounded amount while the agent tries to write 200 MiB', async () => {
    const TOTAL = 200 * 1024 * 1024;
    const WINDOW = 8 * 1024 * 1024;
    const out = join(tmp(), 'otel');
    const child = spawnCli(['proxy', '--out', out, '--', process.execPath, '-e', WRITER], {
      WRITER_TOTAL: String(TOTAL),
    });
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const received = createHash('sha256');
    let consumed = 0;
    let readUntil = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      consumed += chunk.length;
      received.update(chunk);
      if (consumed >= readUntil) child.stdout.pause();
    });
    child.stdout.pause(); // the client is not reading

    const leads: number[] = [];
    const rss: number[] = [];
    let done: { total: number; sha: string } | undefined;
    let pending = '';
    child.stderr.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      let nl = pending.indexOf('\n');
      while (nl !== -1) {
        const [word, count, sha] = pending.slice(0, nl).split(' ');
        pending = pending.slice(nl + 1);
        nl = pending.indexOf('\n');
        if (word === 'stall') {
          // The agent is blocked: how far ahead of the client is it, and what does the proxy hold?
          leads.push(Number(count) - consumed);
          const sample = rssKiB(child.pid!);
          if (sample !== undefined) rss.push(sample);
          readUntil = consumed + WINDOW; // read one window, then stop again
          child.stdout.resume();
        } else if (word === 'done') {
          done = { total: Number(count), sha: sha ?? '' };
          readUntil = Number.POSITIVE_INFINITY;
          child.stdout.resume();
        }
      }
    });
    const code = await exited;

    expect(code).toBe(0);
    expect(done?.total).toBe(TOTAL);
    expect(consumed).toBe(TOTAL);
    expect(received.digest('hex')).toBe(done?.sha);
    // The agent blocked many times (it was paused, not buffered for) ...
    expect(leads.length).toBeGreaterThan(TOTAL / WINDOW / 2);
    // ... never more than 4 MiB ahead of what the client had read ...
    expect(Math.max(...leads)).toBeLessThan(4 * 1024 * 1024);
    // ... and the proxy's memory stayed far below the 200 MiB it forwarded.
    expect(Math.max(...rss)).toBeLessThan(160 * 1024);
  });
});
