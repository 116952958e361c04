/**
 * Global setup of the whole suite: builds the stack's engines that are
 * missing or stale (the collector distribution, Jaeger, Prometheus 3, from Go
 * modules into the user cache; a no-op in well under a second when they are
 * built), so `npm test` alone sets up what it needs on a machine that has
 * Go. Tests take the binaries from the cache (`binary(name)`), never from
 * `PATH`: every test runs the Prometheus the stack deploys.
 *
 * Never fails the run: when Go is missing or a build fails, it says so once
 * on stderr, and each test that needs an engine fails with the command that
 * builds it (`npm run stack -- build`).
 *
 * @module subagent-otel/test/helpers/engines-setup
 */
import { ensureEngines } from '../../scripts/stack/engines.mjs';

export default async function setup(): Promise<void> {
  try {
    await ensureEngines({ log: (line: string) => process.stderr.write(`${line}\n`) });
  } catch (error) {
    process.stderr.write(`engines-setup: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}
