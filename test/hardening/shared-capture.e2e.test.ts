/**
 * `--capture FILE` never destroys what is there: an existing file is
 * appended to, and four proxies sharing one capture file at the same time
 * leave every run of every session replayable.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { finished, isIdleLine, rpc, runCli, spawnCli, waitForLine, QUIET_ENV } from '../helpers/cli.js';
import { FIXTURE_SDK_RUNTIME } from '../helpers/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'shared-capture-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One proxied runtime answering `prompts` completed prompts, captured to `capture`. */
async function proxiedSession(capture: string, name: string, prompts: number): Promise<number | null> {
  const child = spawnCli(
    ['proxy', '--out', join(dir, `otel-${name}`), '--capture', capture, '--', process.execPath, FIXTURE_SDK_RUNTIME],
    QUIET_ENV,
  );
  const done = finished(child);
  child.stdin.write(rpc(1, 'initialize', { cwd: '/work', provider: 'deepseek', model: 'deepseek-chat' }));
  for (let i = 0; i < prompts; i += 1) {
    const id = i + 2;
    const sessionId = `${name}-s${i % 3}`;
    // The runtime answers a prompt when it is queued; the run is over when its session goes idle.
    const answered = waitForLine(child, (line) => line.startsWith(`{"jsonrpc":"2.0","id":${id},`));
    const idle = waitForLine(child, isIdleLine(sessionId));
    child.stdin.write(
      rpc(id, 'session/prompt', { sessionId, contentBlocks: [{ type: 'text', text: 'scenario:completed' }] }),
    );
    await Promise.all([answered, idle]);
  }
  child.stdin.write(rpc(prompts + 2, 'shutdown'));
  child.stdin.end();
  return (await done).code;
}

describe('proxy --capture', () => {
  it('appends to an existing file instead of truncating it', async () => {
    const capture = join(dir, 'existing.ndjson');
    const before = 'precious line one\nprecious line two\n';
    writeFileSync(capture, before);
    expect(await proxiedSession(capture, 'solo', 1)).toBe(0);
    const after = readFileSync(capture, 'utf8');
    expect(after.startsWith(before)).toBe(true);
    expect(after.slice(before.length).split('\n')[0]).toMatch(
      /^\{"type":"subagent-otel-capture","version":1,"protocol":"auto","startedAt":\d+,"id":"[0-9a-f]{12}"\}$/,
    );
  });

  it('keeps every run of four proxies writing one capture file at once', async () => {
    const capture = join(dir, 'shared.ndjson');
    const codes = await Promise.all(['a', 'b', 'c', 'd'].map((name) => proxiedSession(capture, name, 25)));
    expect(codes).toEqual([0, 0, 0, 0]);
    const r = await runCli(['replay', '--json', '--out', join(dir, 'replayed'), capture], '', QUIET_ENV);
    // No replay problem (stderr may carry the SDK's warning about a span the fixture timed inconsistently, as live).
    expect(r.stderr.toString()).not.toContain('subagent-otel replay:');
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout.toString()) as {
      runs: number;
      problems: number;
      stopReasons: Array<{ stopReason: string; runs: number }>;
    };
    expect(summary.problems).toBe(0);
    expect(summary.runs).toBe(100);
    expect(summary.stopReasons).toMatchObject([{ stopReason: 'completed', runs: 100 }]);
  }, 120_000);
});
