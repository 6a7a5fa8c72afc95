import { readFile } from 'node:fs/promises';
import { LOCAL_CREDENTIALS, type LocalOutputs } from '@adhoc-scheduler/infra';
import { assertLoopback, type SchedulerService } from './connection.js';

/**
 * A local service started elsewhere (`pnpm start`), found through the outputs file it writes;
 * `tenantsFile` is the registry it reads (its --tenants). Its clients are not the harness's to
 * count, so there is no usage report.
 */
export async function connectToRunningService(outputsFile: string, tenantsFile: string): Promise<SchedulerService> {
  // Older services (loadtest compare's base) have no publicIngestQueueUrl: the shared topic delivered to ingestQueueUrl.
  const outputs = JSON.parse(await readFile(outputsFile, 'utf8')) as Omit<LocalOutputs, 'publicIngestQueueUrl'> &
    Partial<Pick<LocalOutputs, 'publicIngestQueueUrl'>>;
  assertLoopback(outputs.endpoint, `the SNS/SQS endpoint in ${outputsFile}`);
  assertLoopback(outputs.dynamodbEndpoint, `the DynamoDB endpoint in ${outputsFile}`);
  return {
    mode: 'external',
    access: {
      region: outputs.region,
      endpoint: outputs.endpoint,
      dynamodbEndpoint: outputs.dynamodbEndpoint,
      credentials: LOCAL_CREDENTIALS,
      profile: undefined,
    },
    inputTopicArn: outputs.inputTopicArn,
    emitterRoleArn: outputs.emitterRoleArn,
    ingestQueueUrl: outputs.publicIngestQueueUrl ?? outputs.ingestQueueUrl,
    tenantInputTopicArns: outputs.tenantInputTopicArns,
    files: { tenants: tenantsFile, outputs: outputsFile },
    // Its settings live in that process's environment; the harness does not guess them.
    local: undefined,
    report: async () => undefined,
    stop: async () => undefined,
  };
}

export interface DeployedStack {
  readonly region: string;
  readonly profile: string | undefined;
  readonly inputTopicArn: string;
  readonly emitterRoleArn: string;
}

/** A stack deployed with the CDK app: the harness only publishes and consumes, with the profile's credentials. */
export function connectToDeployedStack(stack: DeployedStack): SchedulerService {
  return {
    mode: 'aws',
    access: { region: stack.region, endpoint: undefined, dynamodbEndpoint: undefined, credentials: undefined, profile: stack.profile },
    inputTopicArn: stack.inputTopicArn,
    emitterRoleArn: stack.emitterRoleArn,
    local: undefined,
    report: async () => undefined,
    stop: async () => undefined,
  };
}
