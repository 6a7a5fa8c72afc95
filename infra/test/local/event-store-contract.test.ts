import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbEventStore, DynamoDbLabelledEvents, DynamoDbTenantPauses, type BatchWriteMode } from '@adhoc-scheduler/shared';
import { afterAll, beforeAll, describe } from 'vitest';
import { eventStoreContract } from '../../../shared/test/contracts/event-store-contract.js';
import { createLocalResources } from '../../src/local/resources.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { capturingLogger, sharedEmulators, uniqueName } from './kit.js';

/**
 * The DynamoDB store on DynamoDB Local held to the event store contract, in both ways it writes
 * batches: PartiQL statements (as on AWS) and transactions (as the local service). One table for
 * the file: each case writes under a tenant of its own.
 */
const emulators = sharedEmulators();
const client = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.dynamodbEndpoint }),
  { marshallOptions: { removeUndefinedValues: true } },
);
let tableName = '';

beforeAll(async () => {
  const resources = await createLocalResources(
    { messaging: emulators.messagingEndpoint, dynamodb: emulators.dynamodbEndpoint },
    { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS },
    uniqueName('contract'),
    { visibilityTimeoutSeconds: 30, emitMaxAgeSeconds: 3600, tenantIds: [], logger: capturingLogger().logger },
  );
  tableName = resources.tableName;
});
afterAll(() => {
  client.destroy();
});

describe.each<BatchWriteMode>(['statements', 'transactions'])('the DynamoDB event store, writing batches as %s', (mode) => {
  eventStoreContract((clock) => {
    const store = new DynamoDbEventStore(client, tableName, { batchWrites: mode, clock });
    return {
      store,
      pauses: new DynamoDbTenantPauses(client, tableName),
      counter: store.counters,
      labelled: new DynamoDbLabelledEvents(client, tableName, 2),
    };
  });
});
