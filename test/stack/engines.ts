/**
 * Test helper: the stack's engines (scripts/stack/engines.mjs) and one-shot
 * runs of their command-line tools. A missing or stale engine fails the test
 * with the command that builds it (`npm run stack -- build`, which needs Go).
 *
 * @module subagent-otel/test/stack/engines
 */

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { binary } from '../../scripts/stack/engines.mjs';

/** collector-config/, where every shipped config lives. */
export const CONFIG_DIR = fileURLToPath(new URL('../../collector-config/', import.meta.url));

/** Outcome of one finished tool run. */
export interface ToolRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs an engine binary to completion (at most 120 s) in `cwd` with `env`
 * added to this process's environment.
 * @throws when the binary is not built (the message names the build command) or cannot start.
 */
export function runEngine(
  name: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): ToolRun {
  const r = spawnSync(binary(name), args, {
    cwd: options.cwd ?? CONFIG_DIR,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.error !== undefined) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
