import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Emulators } from '../../src/local/emulators.js';
import { createLocalResources } from '../../src/local/resources.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { capturingLogger, uniqueName } from './kit.js';

/** A document client of the emulators' DynamoDB Local, as the functions make theirs. */
export function tableClient(emulators: Pick<Emulators, 'dynamodbEndpoint'>): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.dynamodbEndpoint }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
}

/** A new table of the scheduler's, as the local service creates it (with its queues and topics), named after `prefix`. */
export async function newTable(emulators: Pick<Emulators, 'messagingEndpoint' | 'dynamodbEndpoint'>, prefix: string): Promise<string> {
  const resources = await createLocalResources(
    { messaging: emulators.messagingEndpoint, dynamodb: emulators.dynamodbEndpoint },
    { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS },
    uniqueName(prefix),
    { visibilityTimeoutSeconds: 30, emitMaxAgeSeconds: 3600, tenantIds: [], logger: capturingLogger().logger },
  );
  return resources.tableName;
}
