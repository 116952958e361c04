import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The stack's end-to-end tests need the engines built from Go modules: `npm run test:stack` (vitest.stack.config.ts).
    exclude: [...configDefaults.exclude, 'test/stack/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real child processes and loopback servers: keep parallelism modest on 2 cores.
    pool: 'forks',
    maxWorkers: 2,
    // Proxies started by the tests keep their V8 code cache in a directory of this run, not the user's ~/.cache.
    env: { SUBAGENT_OTEL_CODE_CACHE: mkdtempSync(join(tmpdir(), 'subagent-otel-test-code-cache-')) },
  },
});
