import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The whole suite, in two groups run one after the other: `suite` (everything
 * but the stack) first, then `stack` (test/stack/: real collector, Jaeger,
 * Prometheus 3 and Alertmanager processes built by `npm run stack -- build`),
 * one file at a time because each starts a whole stack on a 2-core machine.
 * `vitest run --project suite` runs the first group alone (the further Node
 * lines of .ci/run do).
 */
export default defineConfig({
  test: {
    // Budgets, not verdicts: a test fails on what it asserts, and only a stuck one reaches these. Ten times and more
    // what the slow end-to-end tests take on a busy 2-core CI machine (15-50 s there), so load never decides.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Real child processes and loopback servers: keep parallelism modest on 2 cores.
    pool: 'forks',
    maxWorkers: 2,
    // Builds or reuses the stack's engines (once per project; a no-op when they are built).
    globalSetup: ['test/helpers/engines-setup.ts'],
    // Proxies started by the tests keep their compile cache in a directory of this run, not the user's ~/.cache.
    // The outbox is off unless a test turns it on with a folder of its own (test/telemetry/outbox/, test/stack/outbox*): no test
    // delivers another test's leftovers, and none writes into the user's state directory (decision 0100).
    env: {
      SUBAGENT_OTEL_CODE_CACHE: mkdtempSync(join(tmpdir(), 'subagent-otel-test-code-cache-')),
      SUBAGENT_OTEL_OUTBOX: 'off',
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/stack/**'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'stack',
          include: ['test/stack/**/*.test.ts'],
          testTimeout: 330_000,
          hookTimeout: 600_000,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
