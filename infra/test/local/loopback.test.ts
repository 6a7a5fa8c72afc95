import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sharedEmulators } from './kit.js';

/**
 * Every server the local service starts listens on the loopback address only: nothing on the
 * machine's network can reach its unauthenticated endpoints. Read from the kernel's own table of
 * listening sockets (Linux), so the test sees what is bound, not what the code meant to bind.
 */

/** TCP state 0A is LISTEN in /proc/net/tcp and tcp6. */
const LISTEN = '0A';
/** 127.0.0.1, ::1 and ::ffff:127.0.0.1 as the kernel writes them (hex, in its own byte order). */
const LOOPBACK_ADDRESSES = new Set(['0100007F', '00000000000000000000000001000000', '0000000000000000FFFF00000100007F']);

/** The local address of every socket listening on `port`, from /proc/net/tcp and /proc/net/tcp6. */
function listenersOn(port: number): string[] {
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((table) =>
    readFileSync(table, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[3] === LISTEN && fields[1]?.endsWith(`:${portHex}`))
      .map((fields) => (fields[1] ?? '').split(':')[0] ?? ''),
  );
}

const portOf = (endpoint: string): number => Number(new URL(endpoint).port);

// The run's emulators, started as the local service starts its own.
const emulators = sharedEmulators();

describe('the local service’s servers', () => {
  it.each([
    ['fauxqs (SNS and SQS)', () => emulators.messagingEndpoint],
    ['DynamoDB Local', () => emulators.dynamodbEndpoint],
  ])('%s listens on the loopback address only', (_name, endpoint) => {
    const listeners = listenersOn(portOf(endpoint()));
    expect(listeners.length).toBeGreaterThan(0);
    for (const address of listeners) expect(LOOPBACK_ADDRESSES.has(address), `listening on ${address}`).toBe(true);
  });
});
