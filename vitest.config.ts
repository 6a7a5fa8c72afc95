import { configDefaults, defineConfig } from 'vitest/config';

/** The tests that run on the real emulators: one DynamoDB Local and one fauxqs, started once per run for all of them. */
const EMULATOR_TESTS = ['infra/test/local/**/*.test.ts', 'loadtest/test/chaos.test.ts', 'loadtest/test/usage-meter.test.ts'];

export default defineConfig({
  test: {
    // Integration tests wait for due times and share the emulators; give them room on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: true,
    // Most of an integration test's time is waiting for a due time, not computing: more files at
    // once than cores keeps both busy (see docs/contributing.md, "How long it takes").
    maxWorkers: 4,
    // No test file keeps state in a module it shares with others (each builds its own resources,
    // none mocks a module), so a worker loads the SDK, the CDK and the service once for all its
    // files instead of once a file.
    isolate: false,
    projects: [
      {
        extends: true,
        test: {
          // Unit tests, CDK tests, and the tests that start a service of their own.
          name: 'standalone',
          include: ['{shared,functions,infra,loadtest,quickstart}/test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...EMULATOR_TESTS],
        },
      },
      {
        extends: true,
        test: {
          name: 'emulators',
          include: EMULATOR_TESTS,
          // Started only when a test of this project runs.
          globalSetup: ['infra/test/local/shared-emulators.ts'],
        },
      },
    ],
  },
});
