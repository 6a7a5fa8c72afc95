import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { warmDynamoDbLocal, warmUpWhenNothingWaits } from '../../src/local/dynamodb-warm-up.js';
import { createLocalResources, tableDefinition } from '../../src/local/resources.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { capturingLogger, sharedEmulators, startTestScheduler, uniqueName } from './kit.js';

/**
 * A fresh DynamoDB Local is worked before the service polls, so its JIT compiles while the cores
 * are idle (dynamodb-warm-up.ts); a start with messages waiting takes them up at once instead.
 */
const emulators = sharedEmulators();
const access = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
const dynamodb = DynamoDBDocumentClient.from(new DynamoDBClient({ ...access, endpoint: emulators.dynamodbEndpoint }));
const sqs = new SQSClient({ ...access, endpoint: emulators.messagingEndpoint });
afterAll(() => {
  dynamodb.destroy();
  sqs.destroy();
});

async function tableNames(): Promise<string[]> {
  const { TableNames = [] } = await dynamodb.send(new ListTablesCommand({}));
  return TableNames;
}

describe('DynamoDB Local warm-up', () => {
  it("sends the scheduler's kinds of request for its budget, then deletes its scratch table", async () => {
    const scratch = uniqueName('scratch');
    const warmed = await warmDynamoDbLocal(dynamodb, scratch, 500);
    expect(warmed.requests).toBeGreaterThanOrEqual(5);
    expect(warmed.elapsedMs).toBeGreaterThanOrEqual(500);
    expect(await tableNames()).not.toContain(scratch);
  });

  it('replaces a scratch table a start killed during its warm-up left behind', async () => {
    const scratch = uniqueName('scratch');
    await dynamodb.send(new CreateTableCommand(tableDefinition(scratch)));
    await warmDynamoDbLocal(dynamodb, scratch, 100);
    expect(await tableNames()).not.toContain(scratch);
  });

  it('warms a start whose queues are empty, and not one with a message waiting', async () => {
    const namePrefix = uniqueName('warm');
    const first = capturingLogger();
    const scheduler = await startTestScheduler(emulators, { namePrefix, dynamodbWarmUpMs: 300, logger: first.logger });
    await scheduler.stop();
    expect(first.lines.find(({ msg }) => msg === 'DynamoDB Local warmed up')).toMatchObject({ requests: expect.any(Number) });

    // An event due in a quarter of an hour waits in the delay queue through the restart.
    await sqs.send(new SendMessageCommand({ QueueUrl: scheduler.outputs.delayQueueUrl, MessageBody: '{}', DelaySeconds: 900 }));
    const second = capturingLogger();
    const restarted = await startTestScheduler(emulators, { namePrefix, dynamodbWarmUpMs: 300, logger: second.logger });
    await restarted.stop();
    expect(second.lines.find(({ msg }) => msg === 'DynamoDB Local not warmed up: the queues hold messages')).toMatchObject({
      messagesHeld: 1,
    });
    expect(second.lines.some(({ msg }) => msg === 'DynamoDB Local warmed up')).toBe(false);
  });

  it('is cut short, logged and its scratch table deleted when DynamoDB Local refuses one of its requests, and the start goes on', async () => {
    const resources = await createLocalResources(
      { messaging: emulators.messagingEndpoint, dynamodb: emulators.dynamodbEndpoint },
      access,
      uniqueName('refused'),
      { visibilityTimeoutSeconds: 30, emitMaxAgeSeconds: 3600, tenantIds: [], logger: capturingLogger().logger },
    );
    // As a cold DynamoDB Local once answered one of two transactions sent at once.
    const refusing = DynamoDBDocumentClient.from(new DynamoDBClient({ ...access, endpoint: emulators.dynamodbEndpoint }));
    let refused = 0;
    refusing.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'TransactWriteItemsCommand' || refused > 0) return next(args);
        refused++;
        throw Object.assign(new Error('Invalid ConditionExpression: Index 0 out of bounds for length 0'), { name: 'ValidationException' });
      },
      { step: 'initialize' },
    );
    const { logger, lines } = capturingLogger();
    try {
      await warmUpWhenNothingWaits(300, { sqs, dynamodb: refusing }, resources, logger);
    } finally {
      refusing.destroy();
    }
    expect(refused).toBe(1);
    expect(lines.find(({ msg }) => msg === 'DynamoDB Local warm-up cut short; the service starts all the same')).toMatchObject({
      err: expect.objectContaining({ message: expect.stringContaining('Index 0 out of bounds') }),
    });
    expect(lines.some(({ msg }) => msg === 'DynamoDB Local warmed up')).toBe(false);
    expect(await tableNames()).not.toContain(`${resources.tableName}-warm-up`);
  });
});
