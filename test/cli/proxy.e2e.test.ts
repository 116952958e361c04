import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ATTR_SUBAGENT_OUTPUT,
  ATTR_SUBAGENT_OUTPUT_SOURCE,
  ATTR_SUBAGENT_STOP_REASON,
} from '../../src/telemetry/semconv.js';
import { attributes, finished, isIdleLine, readSpans, rpc, runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { FIXTURE_SDK_RUNTIME, ROOT } from '../helpers/paths.js';

const ECHO = join(ROOT, 'test', 'helpers', 'echo-child.cjs');
const tmp = (): string => mkdtempSync(join(tmpdir(), 'proxy-e2e-'));

async function throughEcho(input: Buffer, env: NodeJS.ProcessEnv = {}) {
  const dir = tmp();
  const record = join(dir, 'received.bin');
  const result = await runCli(['proxy', '--out', join(dir, 'otel'), '--', process.execPath, ECHO, record], input, env);
  return { ...result, received: readFileSync(record), dir };
}

describe('proxy transparency (real processes)', () => {
  const adversarial: Array<[string, Buffer]> = [
    [
      'malformed JSON and a partial last line',
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"x"\n{not json}\n[1,2]\n{"jsonrpc":"2.0","id":2,"method":"half'),
    ],
    [
      'CRLF line endings',
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\r\n\r\nplain text\r\n'),
    ],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a, 0xc3, 0x28, 0x0a, 0xe2, 0x82])],
    [
      'a multi-megabyte line',
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","method":"big","params":"'),
        Buffer.alloc(3 * 1024 * 1024, 0x61),
        Buffer.from('"}\n'),
      ]),
    ],
    ['no bytes at all', Buffer.alloc(0)],
  ];

  it.each(adversarial)('passes %s through byte-identical in both directions', async (_name, input) => {
    const r = await throughEcho(input);
    expect(r.code).toBe(0);
    expect(r.received.equals(input)).toBe(true);
    expect(r.stdout.equals(input)).toBe(true);
    expect(r.stderr.toString('utf8')).toBe('echo-child: started \u00e9\n');
  });

  it('passes random byte streams through byte-identical', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), async (bytes) => {
        const input = Buffer.from(bytes);
        const r = await throughEcho(input);
        expect(r.received.equals(input)).toBe(true);
        expect(r.stdout.equals(input)).toBe(true);
      }),
      { numRuns: 12 },
    );
  });

  it('exits with the child exit code', async () => {
    expect((await throughEcho(Buffer.from('x\n'), { ECHO_EXIT: '3' })).code).toBe(3);
  });

  it('dies by the same signal as a signal-killed child', async () => {
    const r = await throughEcho(Buffer.from('x\n'), { ECHO_SELF_KILL: 'SIGKILL' });
    expect(r.code).toBeNull();
    expect(r.signal).toBe('SIGKILL');
  });

  it('dies by the same signal when the child dies by a catchable signal', async () => {
    const r = await throughEcho(Buffer.from('x\n'), { ECHO_SELF_KILL: 'SIGINT' });
    expect(r.code).toBeNull();
    expect(r.signal).toBe('SIGINT');
  });

  it('forwards SIGTERM to the child and exits with its code', async () => {
    const dir = tmp();
    const ready = join(dir, 'ready');
    const child = spawnCli(['proxy', '--out', join(dir, 'otel'), '--', process.execPath, ECHO, join(dir, 'rec')], {
      ECHO_READY: ready,
    });
    const done = finished(child);
    child.stdin.write('hello\n');
    await waitForLine(child, (l) => l === 'hello');
    expect(existsSync(ready)).toBe(true);
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code).toBe(42);
    expect(r.stderr.toString()).toContain('echo-child: got SIGTERM');
  });

  it('prints a clear error and exits 127 when the command does not exist', async () => {
    const r = await runCli(['proxy', '--out', join(tmp(), 'o'), '--', '/nonexistent/agent']);
    expect(r.code).toBe(127);
    expect(r.stderr.toString()).toMatch(/^subagent-otel proxy: cannot start '\/nonexistent\/agent': ENOENT/);
  });
});

describe('proxy observation of the SDK runtime', () => {
  it('emits a span with the partial text of an empty-terminal-message run, parented by TRACEPARENT', async () => {
    const dir = tmp();
    const out = join(dir, 'otel');
    const child = spawnCli(['proxy', '--out', out, '--', process.execPath, FIXTURE_SDK_RUNTIME], {
      TRACEPARENT: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      FAKE_EMPTY_MESSAGE: '1',
    });
    const done = finished(child);
    child.stdin.write(rpc(1, 'initialize', { cwd: '/', provider: 'deepseek', model: 'deepseek-chat' }));
    const idle = waitForLine(child, isIdleLine('s1'));
    child.stdin.write(rpc(2, 'session/prompt', { sessionId: 's1', contentBlocks: [{ type: 'text', text: 'go' }] }));
    await idle;
    child.stdin.write(rpc(3, 'shutdown'));
    child.stdin.end();
    const r = await done;
    expect(r.code).toBe(0);
    const spans = readSpans(out).filter((s) => s.name.startsWith('invoke_agent'));
    expect(spans).toHaveLength(1);
    const span = spans[0]!;
    expect(span.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(span.parentSpanId).toBe('00f067aa0ba902b7');
    expect(attributes(span)).toMatchObject({
      [ATTR_SUBAGENT_STOP_REASON]: 'max-tokens',
      [ATTR_SUBAGENT_OUTPUT_SOURCE]: 'stream',
      [ATTR_SUBAGENT_OUTPUT]: '[{"type":"text","text":"Partial answer before the limit"}]',
    });
  });
});
