/**
 * An agent that dies with 10,000 runs open: the proxy closes every one as
 * `error` at once, and the file exporter takes the whole burst (its bounded
 * backlog is in bytes, not a few thousand lines), so every run is in
 * `traces.jsonl`; anything an exporter could not take would be counted
 * exactly in the log file.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { attributes, readSpans, runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'proxy-burst-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RUNS = 10_000;

describe('an agent dying with many open runs', () => {
  it('leaves every run in the output file, closed as error', async () => {
    // The agent starts a turn on each of RUNS sessions, then dies (exit 3).
    const agent = `
      const lines = [];
      for (let i = 0; i < ${RUNS}; i += 1) {
        lines.push(JSON.stringify({ jsonrpc: '2.0', method: 'session.event', params: { sessionId: 's' + i, event: { type: 'turn/start', seq: 0, time: 1700000000000 + i, data: { turn: 0 } } } }));
      }
      process.exitCode = 3;
      process.stdout.write(lines.join('\\n') + '\\n');
    `;
    const out = join(dir, 'otel');
    const log = join(dir, 'proxy.log');
    const done = await runCli(['proxy', '--protocol', 'sdk', '--out', out, '--', process.execPath, '-e', agent], '', {
      SUBAGENT_OTEL_LOG_FILE: log,
      SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '60000',
    });
    expect(done.code).toBe(3);
    expect(
      done.stdout
        .toString()
        .split('\n')
        .filter((line) => line !== ''),
    ).toHaveLength(RUNS);
    const runs = readSpans(out).filter((span) => span.name.startsWith('invoke_agent'));
    expect(runs).toHaveLength(RUNS);
    expect(new Set(runs.map((span) => attributes(span)['subagent.stop_reason']))).toEqual(new Set(['error']));
    let logged = '';
    try {
      logged = readFileSync(log, 'utf8');
    } catch {
      // No log file: nothing was worth logging.
    }
    expect(logged).not.toContain('could not be delivered');
  }, 120_000);
});
