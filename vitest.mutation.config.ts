import { defineConfig } from 'vitest/config';

/**
 * What the mutation run (stryker.config.json) runs against each mutant of shared/src: the unit
 * tests of shared/ alone, on the in-memory fakes (no emulators, no CDK).
 */
export default defineConfig({
  test: {
    include: ['shared/test/**/*.test.ts'],
    // The property tests take a few seconds, more on a loaded machine (as in vitest.config.ts).
    testTimeout: 60_000,
    // The property tests run for most mutants: fewer runs, each from the same seed, so that a
    // mutant is killed or not the same way every time (see trust.properties.test.ts).
    env: { FC_RUNS: '25', FC_SEED: '1' },
  },
});
