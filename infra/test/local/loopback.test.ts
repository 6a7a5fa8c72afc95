import { describe, expect, it } from 'vitest';
import { sharedEmulators } from './kit.js';
import { listeningSockets } from './listening-sockets.js';

/**
 * Every server the local service starts listens on the loopback address only: nothing on the
 * machine's network can reach its unauthenticated endpoints. Read from the kernel's own table of
 * listening sockets (Linux), so the test sees what is bound, not what the code meant to bind.
 */

/** 127.0.0.1, ::1 and ::ffff:127.0.0.1 as the kernel writes them (hex, in its own byte order). */
const LOOPBACK_ADDRESSES = new Set(['0100007F', '00000000000000000000000001000000', '0000000000000000FFFF00000100007F']);

const portOf = (endpoint: string): number => Number(new URL(endpoint).port);

// The run's emulators, started as the local service starts its own.
const emulators = sharedEmulators();

describe('the local service’s servers', () => {
  it.each([
    ['fauxqs (SNS and SQS)', () => emulators.messagingEndpoint],
    ['DynamoDB Local', () => emulators.dynamodbEndpoint],
  ])('%s listens on the loopback address only', (_name, endpoint) => {
    const listeners = listeningSockets(portOf(endpoint())).map(({ address }) => address);
    expect(listeners.length).toBeGreaterThan(0);
    for (const address of listeners) expect(LOOPBACK_ADDRESSES.has(address), `listening on ${address}`).toBe(true);
  });
});
