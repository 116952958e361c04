/**
 * Real sessions of the coding agents, from public repositories with their
 * licences, live outside the project in the workspace's shared folder
 * (`../shared/transcripts/<agent>/…` from the project's root): the project
 * never holds copies of them. CI and every checkout of the workspace have
 * the folder; where it is missing, a test that needs it fails in CI with a
 * message saying where it belongs, and outside CI reports itself skipped.
 *
 * @module subagent-otel/test/helpers/shared-transcripts
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './paths.js';

/** `../shared/transcripts` from the project's root. */
export const SHARED_TRANSCRIPTS = join(ROOT, '..', 'shared', 'transcripts');

/**
 * The folder `../shared/transcripts/<relative>`, when it exists. In CI
 * (`CI` set) a missing folder throws, naming it; elsewhere it gives
 * `undefined` and the caller's tests run with `describe.runIf(...)`.
 */
export function sharedTranscripts(relative: string): string | undefined {
  const path = join(SHARED_TRANSCRIPTS, relative);
  if (existsSync(path)) return path;
  const message = `${path} is missing: these tests read real agents' sessions from the workspace's shared folder (shared/transcripts beside the project's clone; see its README); put the workspace's shared/ folder beside the clone`;
  if (process.env['CI'] !== undefined && process.env['CI'] !== '' && process.env['CI'] !== 'false') throw new Error(message);
  process.stderr.write(`skipped: ${message}\n`);
  return undefined;
}
