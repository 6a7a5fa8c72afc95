import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{shared,functions,infra,loadtest,quickstart}/test/**/*.test.ts'],
    // Integration tests start their own emulators; give them room on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
