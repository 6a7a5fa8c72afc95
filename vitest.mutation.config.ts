import { configDefaults, defineConfig } from 'vitest/config';

/**
 * What the mutation run (stryker.config.json) runs against each mutant of shared/src: the unit
 * tests of shared/ alone, on the in-memory fakes (no emulators, no CDK). The property tests are
 * left out: they take seconds where the others take milliseconds, and would run for most of the
 * two thousand mutants.
 */
export default defineConfig({
  test: {
    include: ['shared/test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, 'shared/test/trust.properties.test.ts'],
    // Some take a few seconds on a loaded machine (as in vitest.config.ts).
    testTimeout: 60_000,
  },
});
