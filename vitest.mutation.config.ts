import { configDefaults, defineConfig } from 'vitest/config';

/**
 * What the mutation run (stryker.config.json) runs against each mutant of shared/src: the unit
 * and property tests of shared/, on the in-memory fakes (no emulators, no CDK). Each mutant runs
 * only the tests that reach it, so the property tests' seconds are spent on the input paths they
 * cover, where they kill what the example tests leave (ingest.ts: 73.6 % with them, 63.6 % without).
 */
export default defineConfig({
  test: {
    include: ['shared/test/**/*.test.ts'],
    exclude: [...configDefaults.exclude],
    // Some take a few seconds on a loaded machine (as in vitest.config.ts).
    testTimeout: 60_000,
  },
});
