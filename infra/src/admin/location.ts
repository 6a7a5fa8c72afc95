import { readFile } from 'node:fs/promises';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbEventRecords, type EventRecords } from '@adhoc-scheduler/shared';
import { LOCAL_CREDENTIALS } from '../local/runtime.js';
import type { LocationValues } from './arguments.js';
import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service';
import { AdminError, isServiceAnswer, AdminUsageError } from './errors.js';
import { readRunningLocalOutputs } from './local-service.js';
import { SCHEDULER_OUTPUTS } from '../cdk/stack-outputs.js';

/** The scheduler a command reads: the local service (its outputs file), or a deployed stack. */
export type Location =
  | { readonly kind: 'local'; readonly outputs: string }
  | {
      readonly kind: 'deployed';
      readonly stackOutputs: string | undefined;
      readonly table: string | undefined;
      readonly region: string | undefined;
      readonly profile: string | undefined;
    };

export function locationOf(values: LocationValues, command: string): Location {
  const stackOutputs = values['stack-outputs'];
  const { table, region, profile, outputs } = values;
  if (stackOutputs === undefined && table === undefined) {
    const stray = region !== undefined ? '--region' : profile !== undefined ? '--profile' : undefined;
    if (stray) throw new AdminUsageError(`${stray} is for a deployed stack: name it with --stack-outputs FILE or --table NAME`, command);
    return { kind: 'local', outputs: outputs ?? LOCAL_SERVICE_FILES.outputs };
  }
  if (outputs !== undefined)
    throw new AdminUsageError('--outputs names the local service, --stack-outputs and --table a deployed stack: give one', command);
  if (stackOutputs !== undefined && table !== undefined) throw new AdminUsageError('give --stack-outputs or --table, not both', command);
  return { kind: 'deployed', stackOutputs, table, region, profile };
}

/** The local service's outputs file; an AdminError for a deployed stack, whose tenants only the CDK app registers. */
export function localOnly(location: Location, what: string): string {
  if (location.kind === 'local') return location.outputs;
  throw new AdminError(
    `${what} works on the local service only: on AWS, tenants are registered in the CDK app's configuration (${CDK_TENANTS}), then deployed.`,
  );
}

/** Where the CDK app takes its registry from (infra/src/cdk/context.ts). */
export const CDK_TENANTS = 'context "tenants" in cdk.json, or -c tenantsFile=FILE';

export interface StackOutputs {
  readonly tableName: string;
  readonly region: string | undefined;
  /** The shared input topic (the public tenant's). */
  readonly inputTopicArn: string | undefined;
}

/** The scheduler stack's outputs in `cdk deploy --outputs-file` JSON ({stack: {output: value}}). */
export async function readStackOutputs(path: string): Promise<StackOutputs> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new AdminError(`cannot read the stack outputs ${path} (${describeError(error)}): cdk deploy --outputs-file writes them`);
  }
  const stacks = Object.entries((parsed ?? {}) as Record<string, Partial<Record<string, unknown>> | null>).flatMap(([stack, outputs]) => {
    const text = (key: string) => {
      const value = outputs?.[key];
      return typeof value === 'string' ? value : undefined;
    };
    const tableName = text(SCHEDULER_OUTPUTS.tableName);
    return tableName === undefined
      ? []
      : [{ stack, tableName, region: text(SCHEDULER_OUTPUTS.region), inputTopicArn: text(SCHEDULER_OUTPUTS.inputTopicArn) }];
  });
  const [stack, ...others] = stacks;
  if (stack === undefined)
    throw new AdminError(`${path} has no stack with a ${SCHEDULER_OUTPUTS.tableName} output: is it the scheduler stack's outputs?`);
  if (others.length > 0)
    throw new AdminError(
      `${path} holds several scheduler stacks (${stacks.map((found) => found.stack).join(', ')}): name the table with --table NAME --region R`,
    );
  return stack;
}

/** The event table of a location: its name, how to reach it, and how to name it in messages. */
interface TableAccess {
  readonly tableName: string;
  readonly client: DynamoDBClientConfig;
  readonly description: string;
  /** What to try when it cannot be read: for the local service, only when nothing answered. */
  readonly hint: (error: unknown) => string;
}

async function tableAccess(location: Location): Promise<TableAccess> {
  if (location.kind === 'local') {
    // Said as onboarding says it when a killed service left its outputs file behind.
    const { outputs } = await readRunningLocalOutputs(location.outputs);
    return {
      tableName: outputs.tableName,
      client: { region: outputs.region, endpoint: outputs.dynamodbEndpoint, credentials: LOCAL_CREDENTIALS },
      description: `table ${outputs.tableName} of the local service (${outputs.dynamodbEndpoint})`,
      hint: (error) => (isServiceAnswer(error) ? '' : ' Is the local service running? Start it with scripts/start.'),
    };
  }
  const stack = location.stackOutputs === undefined ? undefined : await readStackOutputs(location.stackOutputs);
  const tableName = location.table ?? stack?.tableName ?? '';
  // Unset region and profile leave both to the SDK's default chain (AWS_REGION, AWS_PROFILE, ~/.aws).
  const region = location.region ?? stack?.region;
  return {
    tableName,
    client: { ...(region ? { region } : {}), ...(location.profile ? { profile: location.profile } : {}) },
    description: `table ${tableName}${region ? ` in ${region}` : ''}`,
    hint: () => ' Check the region (--region), the credentials (--profile) and that they may read the table.',
  };
}

/** Runs `use` with the location's event records; read failures become an AdminError naming the table. */
export async function withEventRecords<T>(location: Location, use: (records: EventRecords) => Promise<T>): Promise<T> {
  return withTable(location, (client, tableName) => use(new DynamoDbEventRecords(client, tableName)));
}

/** Runs `use` with a client of the location's table; failures become an AdminError naming the table. */
export async function withTable<T>(location: Location, use: (client: DynamoDBDocumentClient, tableName: string) => Promise<T>): Promise<T> {
  const access = await tableAccess(location);
  const client = new DynamoDBClient(access.client);
  try {
    return await use(DynamoDBDocumentClient.from(client), access.tableName);
  } catch (error) {
    if (error instanceof AdminError || error instanceof AdminUsageError) throw error;
    throw new AdminError(`cannot read the ${access.description}: ${describeError(error)}.${access.hint(error)}`);
  } finally {
    client.destroy();
  }
}
