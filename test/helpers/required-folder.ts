/**
 * Tests that read data kept outside the project (the real coding-agent
 * sessions in `../shared/transcripts`, which the project must not hold
 * copies of). In CI (`CI` set) a missing folder fails the test with how to
 * get it; elsewhere the test reports itself skipped, naming the folder.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'vitest';
import { ROOT } from './paths.js';

/** The real Claude Code, Codex and Gemini CLI sessions, beside the project (read-only). */
export const SHARED_TRANSCRIPTS = join(ROOT, '..', 'shared', 'transcripts');

/** What to do about a missing shared-transcripts folder. */
export const SHARED_TRANSCRIPTS_HOW =
  'it is the workspace folder of real sessions (one folder per agent, each with its source and licence); check out the workspace with it beside the project, as CI does';

/**
 * Returns `folder` when it exists. When it does not: in CI throws (the test
 * fails) with `how`; outside CI marks the running test skipped with a note
 * naming the folder (never returns).
 */
export function requireFolder(context: TestContext, folder: string, how: string): string {
  if (existsSync(folder)) return folder;
  const message = `${folder} is missing: ${how}`;
  if (process.env['CI'] !== undefined && process.env['CI'] !== '' && process.env['CI'] !== 'false')
    throw new Error(message);
  return context.skip(message);
}

/**
 * `SHARED_TRANSCRIPTS/<relative>` for a whole file of tests, when it exists.
 * In CI a missing folder throws (the file fails, naming it); elsewhere it
 * gives `undefined`, says so on stderr, and the caller's tests run with
 * `describe.runIf(...)`.
 */
export function sharedTranscripts(relative: string): string | undefined {
  const path = join(SHARED_TRANSCRIPTS, relative);
  if (existsSync(path)) return path;
  const message = `${path} is missing: ${SHARED_TRANSCRIPTS_HOW}`;
  if (process.env['CI'] !== undefined && process.env['CI'] !== '' && process.env['CI'] !== 'false')
    throw new Error(message);
  process.stderr.write(`skipped: ${message}\n`);
  return undefined;
}
