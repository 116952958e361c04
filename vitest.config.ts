import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Budgets, not verdicts: a test fails on what it asserts, and only a stuck one reaches these. Ten times and more
    // what the slow end-to-end tests take on a busy 2-core CI machine (15-50 s there), so load never decides.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Real child processes and loopback servers: keep parallelism modest on 2 cores.
    pool: 'forks',
    maxWorkers: 2,
    // Proxies started by the tests keep their V8 code cache in a directory of this run, not the user's ~/.cache.
    env: { SUBAGENT_OTEL_CODE_CACHE: mkdtempSync(join(tmpdir(), 'subagent-otel-test-code-cache-')) },
  },
});
