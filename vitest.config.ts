import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real child processes and loopback servers: keep parallelism modest on 2 cores.
    pool: 'forks',
    maxWorkers: 2,
  },
});
