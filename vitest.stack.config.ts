import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * The stack's end-to-end tests (test/stack/): real collector, Jaeger,
 * Prometheus 3 and Alertmanager processes, built by `npm run stack -- build`.
 * One file at a time: each starts a whole stack, and the machine has 2 cores.
 */
export default defineConfig({
  test: {
    include: ['test/stack/**/*.test.ts'],
    testTimeout: 330_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    env: { SUBAGENT_OTEL_CODE_CACHE: mkdtempSync(join(tmpdir(), 'subagent-otel-test-code-cache-')) },
  },
});
