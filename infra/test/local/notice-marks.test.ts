import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbNoticeMarks, TABLE, type BatchWriteMode } from '@adhoc-scheduler/shared';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedEmulators } from './kit.js';
import { newTable as newTableOf, tableClient } from './table-kit.js';
import { NOW } from '../../../shared/test/contracts/contract-events.js';

/**
 * The failure notices' sent marks on DynamoDB Local, in both ways the table takes batches of
 * conditional writes: PartiQL statements (the stack on AWS) and transactions (the local service).
 */
const emulators = sharedEmulators();
const client = tableClient(emulators);
afterAll(() => {
  client.destroy();
});

const expiresAt = Math.ceil(NOW / 1000) + 3600;

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

describe.each<BatchWriteMode>(['statements', 'transactions'])('the notice marks, written as %s', (mode) => {
  async function marksOn(through: DynamoDBDocumentClient = client): Promise<{ notices: DynamoDbNoticeMarks; table: string }> {
    const table = await newTableOf(emulators, 'notices');
    return { notices: new DynamoDbNoticeMarks(through, table, mode), table };
  }

  it('read a notice as sent once it is marked, and keep its mark until it expires', async () => {
    const { notices, table } = await marksOn();
    expect(await notices.sent(['n', 'other'])).toEqual(new Set());
    expect(await notices.markSent('n', NOW + 1, expiresAt)).toBe('marked');
    expect(await notices.sent(['n', 'other'])).toEqual(new Set(['n']));
    const { Item } = await client.send(new GetCommand({ TableName: table, Key: { [TABLE.partitionKey]: 'n' }, ConsistentRead: true }));
    expect(Item).toEqual({ [TABLE.partitionKey]: 'n', sentAt: NOW + 1, [TABLE.ttlAttribute]: expiresAt });
  });

  it('find the mark of another delivery that published the same notice: marked-before, the first mark kept', async () => {
    const { notices, table } = await marksOn();
    expect(await notices.markSent('n', NOW + 1, expiresAt)).toBe('marked');
    expect(await notices.markSent('n', NOW + 2, expiresAt)).toBe('marked-before');
    // Two copies marked in the same turn: one mark written, the other copy told.
    expect(await Promise.all([notices.markSent('m', NOW, expiresAt), notices.markSent('m', NOW, expiresAt)])).toEqual([
      'marked',
      'marked-before',
    ]);
    const { Item } = await client.send(new GetCommand({ TableName: table, Key: { [TABLE.partitionKey]: 'n' }, ConsistentRead: true }));
    expect(Item).toMatchObject({ sentAt: NOW + 1 });
  });

  it('read a claim an emitter before marks alone left as not sent', async () => {
    const { notices, table } = await marksOn();
    await client.send(
      new PutCommand({ TableName: table, Item: { [TABLE.partitionKey]: 'n', emitClaim: 'an older emitter', emitClaimUntil: NOW } }),
    );
    expect(await notices.sent(['n'])).toEqual(new Set());
  });

  it('read and mark a turn’s notices in one request each, a flood’s marks 25 to a request, one request at a time', async () => {
    const { through, requests, mostInFlight } = countingClient();
    const { notices } = await marksOn(through);
    const ids = Array.from({ length: 60 }, (_, index) => `n-${index}`);
    expect(await notices.sent(ids)).toEqual(new Set());
    const marked = await Promise.all(ids.map((id) => notices.markSent(id, NOW + 1, expiresAt)));
    expect(marked).toEqual(ids.map(() => 'marked'));
    const batchCommand = mode === 'statements' ? 'BatchExecuteStatementCommand' : 'TransactWriteItemsCommand';
    expect({ requests: Object.fromEntries(requests), mostInFlight: mostInFlight() }).toEqual({
      requests: { BatchGetItemCommand: 1, [batchCommand]: 3 },
      mostInFlight: 1,
    });
    expect(await notices.sent(ids)).toEqual(new Set(ids));
    through.destroy();
  });
});
