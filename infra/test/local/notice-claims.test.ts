import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbNoticeClaims, TABLE, type BatchWriteMode } from '@adhoc-scheduler/shared';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedEmulators } from './kit.js';
import { newTable as newTableOf, tableClient } from './table-kit.js';
import { NOW } from '../../../shared/test/contracts/contract-events.js';

/**
 * The failure notices' claims on DynamoDB Local, in both ways the table takes batches of
 * conditional writes: PartiQL statements (the stack on AWS) and transactions (the local service).
 */
const emulators = sharedEmulators();
const client = tableClient(emulators);
afterAll(() => {
  client.destroy();
});

const expiresAt = Math.ceil(NOW / 1000) + 3600;
const lease = (owner: string, now: number) => ({ owner, now, leaseUntil: now + 30_000 });

/** A client of its own that counts the requests it sends, by command, and the most it had in flight at once. */
function countingClient(): {
  readonly through: DynamoDBDocumentClient;
  readonly requests: Map<string, number>;
  readonly mostInFlight: () => number;
} {
  const through = tableClient(emulators);
  const requests = new Map<string, number>();
  let inFlight = 0;
  let most = 0;
  through.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? 'unknown';
      requests.set(name, (requests.get(name) ?? 0) + 1);
      inFlight += 1;
      most = Math.max(most, inFlight);
      try {
        return await next(args);
      } finally {
        inFlight -= 1;
      }
    },
    { step: 'initialize', name: 'countRequests' },
  );
  return { through, requests, mostInFlight: () => most };
}

describe.each<BatchWriteMode>(['statements', 'transactions'])('the notice claims, written as %s', (mode) => {
  async function claimsOn(through: DynamoDBDocumentClient = client): Promise<{ notices: DynamoDbNoticeClaims; table: string }> {
    const table = await newTableOf(emulators, 'notices');
    return { notices: new DynamoDbNoticeClaims(through, table, mode), table };
  }

  it('let one delivery publish a notice while its lease lasts, another after it ends, and none once it was sent', async () => {
    const { notices } = await claimsOn();
    expect(await notices.claim('n', lease('d-1', NOW), expiresAt)).toBe('claimed');
    expect(await notices.claim('n', lease('d-2', NOW + 1), expiresAt)).toBe('busy');
    expect(await notices.claim('n', lease('d-1', NOW + 2), expiresAt)).toBe('claimed');
    expect(await notices.claim('n', lease('d-2', NOW + 30_003), expiresAt)).toBe('claimed');
    await notices.markSent('n', NOW + 30_004);
    expect(await notices.claim('n', lease('d-2', NOW + 30_005), expiresAt)).toBe('ended');
    expect(await notices.claim('n', lease('d-3', NOW + 90_000), expiresAt)).toBe('ended');
  });

  it('are given up by their own delivery only', async () => {
    const { notices } = await claimsOn();
    expect(await notices.claim('n', lease('d-1', NOW), expiresAt)).toBe('claimed');
    await notices.release('n', 'd-2');
    expect(await notices.claim('n', lease('d-3', NOW + 1), expiresAt)).toBe('busy');
    await notices.release('n', 'd-1');
    expect(await notices.claim('n', lease('d-3', NOW + 2), expiresAt)).toBe('claimed');
  });

  it('claim and mark a turn’s notices in one request each, a flood’s notices being a write each otherwise', async () => {
    const { through, requests } = countingClient();
    const { notices } = await claimsOn(through);
    const ids = Array.from({ length: 10 }, (_, index) => `n-${index}`);
    const claimed = await Promise.all(ids.map((id) => notices.claim(id, lease(`d-${id}`, NOW), expiresAt)));
    expect(claimed).toEqual(ids.map(() => 'claimed'));
    await Promise.all(ids.map((id) => notices.markSent(id, NOW + 1)));
    const batchCommand = mode === 'statements' ? 'BatchExecuteStatementCommand' : 'TransactWriteItemsCommand';
    expect(Object.fromEntries(requests)).toEqual({ [batchCommand]: 2 });
    const again = await Promise.all(ids.map((id) => notices.claim(id, lease('d-again', NOW + 90_000), expiresAt)));
    expect(again).toEqual(ids.map(() => 'ended'));
    through.destroy();
  });

  it('write a flood’s claims 25 to a request, one request at a time, so that they hold no other write back for long', async () => {
    const { through, requests, mostInFlight } = countingClient();
    const { notices } = await claimsOn(through);
    const ids = Array.from({ length: 60 }, (_, index) => `n-${index}`);
    const claimed = await Promise.all(ids.map((id) => notices.claim(id, lease(`d-${id}`, NOW), expiresAt)));
    expect(claimed).toEqual(ids.map(() => 'claimed'));
    const batchCommand = mode === 'statements' ? 'BatchExecuteStatementCommand' : 'TransactWriteItemsCommand';
    expect({ requests: Object.fromEntries(requests), mostInFlight: mostInFlight() }).toEqual({
      requests: { [batchCommand]: 3 },
      mostInFlight: 1,
    });
    through.destroy();
  });

  it('let one of two deliveries of a notice in the same turn claim it, and keep its item until it expires', async () => {
    const { notices, table } = await claimsOn();
    const outcomes = await Promise.all([
      notices.claim('twice', lease('d-1', NOW), expiresAt),
      notices.claim('twice', lease('d-2', NOW), expiresAt),
      notices.claim('once', lease('d-3', NOW), expiresAt),
    ]);
    expect(outcomes).toEqual(['claimed', 'busy', 'claimed']);
    await notices.markSent('twice', NOW + 1);
    const { Item } = await client.send(new GetCommand({ TableName: table, Key: { [TABLE.partitionKey]: 'twice' }, ConsistentRead: true }));
    expect(Item).toMatchObject({ emitClaim: 'd-1', sentAt: NOW + 1, [TABLE.ttlAttribute]: expiresAt });
  });
});
