import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbTenantRegistry, ENV, systemClock } from '@adhoc-scheduler/shared';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { writeRegistryResource } from './registry-resource.js';

/** The stack's custom resource (TenantRegistryResource): writes the CDK props' registry into the table. */
export async function handler(event: CloudFormationCustomResourceEvent) {
  const tableName = process.env[ENV.tableName];
  if (tableName === undefined) throw new Error(`${ENV.tableName} is not set`);
  const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));
  try {
    return await writeRegistryResource(event, new DynamoDbTenantRegistry(client, tableName, systemClock));
  } finally {
    client.destroy();
  }
}
