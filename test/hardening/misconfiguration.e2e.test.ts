/**
 * Misconfiguration is said at once, with exit 2 before any work: an output
 * directory that is a regular file or cannot be created, an empty agent
 * name. Telemetry that could not be delivered is counted exactly and gives
 * its own exit code (3), distinct from skipped input (1).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { checkOutputDirectory, checkOutputFile } from '../../src/cli/output-paths.js';

const dir = mkdtempSync(join(tmpdir(), 'misconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;
const log = join(dir, 'session.jsonl');
writeFileSync(
  log,
  `${[
    { type: 'session', version: 3, id: 'sess-misconfig', cwd: '/w', createdAt: '2026-11-29T10:00:00.000Z' },
    { type: 'turn/start', seq: 0, time: T0, data: { turn: 0 } },
    {
      type: 'assistant/message',
      seq: 1,
      time: T0 + 1,
      data: { turn: 0, step: 0, message: { id: 'm', role: 'assistant', content: [{ type: 'text', text: 'x' }] } },
    },
    { type: 'turn/end', seq: 2, time: T0 + 2, data: { turn: 0, reason: { kind: 'completed' } } },
  ]
    .map((line) => JSON.stringify(line))
    .join('\n')}\n`,
);
const regularFile = join(dir, 'not-a-directory');
writeFileSync(regularFile, 'keep me\n');

describe('output paths are checked before work starts', () => {
  it.each([
    ['demo', ['demo', '--out', regularFile]],
    ['replay', ['replay', '--out', regularFile, log]],
    ['demo', ['demo', '--out', '/proc/subagent-otel-cannot-exist']],
    ['replay', ['replay', '--out', '/proc/subagent-otel-cannot-exist', log]],
  ])('%s with an unusable --out exits 2 with the reason', async (command, args) => {
    const done = await runCli(args);
    expect(done.code).toBe(2);
    expect(done.stdout.toString()).toBe('');
    expect(done.stderr.toString()).toMatch(
      new RegExp(
        `^subagent-otel ${command}: output directory /\\S+: (it exists and is not a directory|cannot create it: .+)\\n$`,
      ),
    );
  });

  it('reports why for directories and files', async () => {
    expect(await checkOutputDirectory(regularFile)).toBe('it exists and is not a directory');
    expect(await checkOutputDirectory(join(dir, 'new', 'nested'))).toBeUndefined();
    expect(await checkOutputFile(dir)).toBe('it exists and is not a regular file');
    expect(await checkOutputFile(join(dir, 'missing-dir', 'capture.ndjson'))).toMatch(
      /^its directory cannot be used: ENOENT/,
    );
    expect(await checkOutputFile(regularFile)).toBeUndefined();
  });
});

describe('usage errors', () => {
  it('rejects an empty --agent-name', async () => {
    const done = await runCli(['replay', '--agent-name', '', '--out', join(dir, 'o'), log]);
    expect(done.code).toBe(2);
    expect(done.stderr.toString()).toBe("subagent-otel: --agent-name takes a non-empty name such as 'coder', got ''\n");
  });
});

describe('undelivered telemetry', () => {
  it('is counted exactly and exits 3 when every input was read', async () => {
    // Nothing listens on port 9: every OTLP export is refused.
    const done = await runCli(['replay', log], '', {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '3000',
    });
    expect(done.code).toBe(3);
    // One run: its invoke_agent span and one chat span.
    expect(done.stderr.toString()).toMatch(
      /subagent-otel replay: telemetry: 2 span\(s\) and \d+ metric batch\(es\) in all could not be delivered\n/,
    );
  });
});
