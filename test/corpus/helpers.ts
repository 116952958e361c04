/**
 * Shared by the corpus check's end-to-end tests: running the built check,
 * reading its JSON report, temporary folders removed after the tests, and
 * line builders for hand-made Claude Code and Codex transcripts. The Claude
 * Code lines copy the envelope of the synthetic 2.1 sessions
 * (test/transcripts/claude-code/synthetic/README.md: the real 2.1.39 lines'
 * fields, one content block per assistant line); the Codex lines the
 * `{timestamp, type, payload}` records of test/transcripts/codex/synthetic.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { runCommand, type Finished } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';

/** The built check. */
export const CORPUS = join(ROOT, 'dist', 'corpus', 'main.js');

export interface Row {
  name: string;
  checked: number;
  violations: number;
}
export interface Report {
  rows: Row[];
  violations: Array<{ invariant: string; file: string; run?: string; message: string }>;
  normalised: Array<{ run: string; applied: string[] }>;
}

/** Runs `node dist/corpus/main.js ...args`. */
export function corpus(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Finished> {
  return runCommand(process.execPath, [CORPUS, ...args], '', env);
}

/** The `--json` report on stdout. */
export function report(done: Finished): Report {
  return JSON.parse(done.stdout.toString('utf8')) as Report;
}

/** The checked count of one invariant. */
export function checked(r: Report, name: string): number {
  return r.rows.find((row) => row.name === name)?.checked ?? -1;
}

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new temporary folder, removed after the test file's tests. */
export function scratch(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** One Claude Code line: the 2.1 envelope, then `extra`. `agentId` makes it a subagent's (sidechain) line. */
export function claudeLine(
  sessionId: string,
  version: string,
  uuid: string,
  parent: string | null,
  second: number,
  agentId: string | undefined,
  extra: Record<string, unknown>,
): string {
  return JSON.stringify({
    parentUuid: parent,
    isSidechain: agentId !== undefined,
    userType: 'external',
    cwd: '/home/user/proj',
    sessionId,
    version,
    ...(agentId !== undefined ? { agentId } : {}),
    uuid,
    timestamp: new Date(Date.UTC(2026, 2, 1, 10, 0, second)).toISOString(),
    ...extra,
  });
}

/** An assistant line of one content block, with usage (`stop_reason` null unless given). */
export function claudeAssistant(
  id: string,
  block: Record<string, unknown>,
  output: number,
  stopReason: string | null = null,
): Record<string, unknown> {
  return {
    type: 'assistant',
    requestId: `req_${id}`,
    message: {
      model: 'claude-sonnet-4-5-20250929',
      id,
      type: 'message',
      role: 'assistant',
      content: [block],
      stop_reason: stopReason,
      stop_sequence: null,
      usage: {
        input_tokens: 3,
        cache_creation_input_tokens: 10,
        cache_read_input_tokens: 100,
        output_tokens: output,
        server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
      },
    },
  };
}

/** A user line with `content` (a string or blocks). */
export function claudeUser(content: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'user', message: { role: 'user', content }, ...extra };
}

/** One Codex rollout line. */
export function codexLine(second: number, type: string, payload: Record<string, unknown>): string {
  return JSON.stringify({ timestamp: new Date(Date.UTC(2026, 3, 20, 10, 0, second)).toISOString(), type, payload });
}
