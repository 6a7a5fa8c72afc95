import type { TestProject } from 'vitest/node';
import { startEmulators, type Emulators } from '../../src/local/emulators.js';

/** Where the run's emulators answer: what the tests that share them are given. */
export type EmulatorEndpoints = Pick<Emulators, 'dynamodbEndpoint' | 'messagingEndpoint'>;

declare module 'vitest' {
  export interface ProvidedContext {
    emulatorEndpoints: EmulatorEndpoints;
  }
}

/**
 * vitest's globalSetup for the tests on the emulators: one DynamoDB Local and one fauxqs for the
 * whole run, on ports the system picks, stopped when the run ends. Each test makes its own
 * table, queues and topics under a unique name prefix on them (see startTestScheduler), so the
 * tests of both workers share the servers and nothing else. A test that kills or restarts its
 * emulators starts its own.
 */
export default async function startSharedEmulators(project: TestProject): Promise<() => Promise<void>> {
  const emulators = await startEmulators({});
  project.provide('emulatorEndpoints', { dynamodbEndpoint: emulators.dynamodbEndpoint, messagingEndpoint: emulators.messagingEndpoint });
  return () => emulators.stop();
}
