import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LocalOutputs } from '@adhoc-scheduler/infra';
import type { SchedulerConfig } from '@adhoc-scheduler/shared';
import type { ServiceReport } from './probe.js';

/** How the harness reaches the scheduler. */
export type ServiceMode = 'child' | 'in-process' | 'external' | 'aws';

export interface ServiceAccess {
  readonly region: string;
  /** SNS and SQS endpoint of the local service; undefined on AWS. */
  readonly endpoint: string | undefined;
  readonly dynamodbEndpoint: string | undefined;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined;
  /** AWS profile for a deployed stack. */
  readonly profile: string | undefined;
}

/** Where a local service keeps its registry and its outputs: what the operator's tenant commands take (--tenants, --outputs). */
export interface ServiceFiles {
  readonly tenants: string;
  readonly outputs: string;
}

/** The scheduler under test, wherever it runs. */
export interface SchedulerService {
  readonly mode: ServiceMode;
  readonly access: ServiceAccess;
  readonly inputTopicArn: string;
  readonly emitterRoleArn: string;
  /** Settings and resources of a local service; undefined for a deployed stack. */
  readonly local: { readonly config: SchedulerConfig; readonly outputs: LocalOutputs } | undefined;
  /**
   * Where the shared input topic delivers on a local service started elsewhere: what its ingest
   * function has yet to accept waits there, the one measure of acceptance it leaves the harness.
   */
  readonly ingestQueueUrl?: string | undefined;
  /** Each registered tenant's input topic, by id, on a local service started elsewhere (a started one has them in `local`). */
  readonly tenantInputTopicArns?: Readonly<Record<string, string>> | undefined;
  /** A local service's tenants file and outputs file, which the operator's tenant commands take; undefined for a deployed stack. */
  readonly files?: ServiceFiles | undefined;
  /** Usage counters (and, when asked, every invocation) of a service the harness started; undefined otherwise. */
  report(withTimeline: boolean): Promise<ServiceReport | undefined>;
  stop(): Promise<void>;
}

/** The harness's own clients: separate from the service's, so its requests never count as the service's. */
export interface HarnessClients {
  readonly sns: SNSClient;
  readonly sqs: SQSClient;
  /** Only where the harness may reach the table (a local service). */
  readonly dynamodb: DynamoDBDocumentClient | undefined;
  destroy(): void;
}

export function harnessClients(access: ServiceAccess): HarnessClients {
  const base = {
    region: access.region,
    ...(access.credentials ? { credentials: access.credentials } : {}),
    ...(access.profile ? { profile: access.profile } : {}),
  };
  const sns = new SNSClient({ ...base, endpoint: access.endpoint });
  const sqs = new SQSClient({ ...base, endpoint: access.endpoint });
  const dynamodb = access.dynamodbEndpoint
    ? DynamoDBDocumentClient.from(new DynamoDBClient({ ...base, endpoint: access.dynamodbEndpoint }), {
        marshallOptions: { removeUndefinedValues: true },
      })
    : undefined;
  return {
    sns,
    sqs,
    dynamodb,
    destroy() {
      sns.destroy();
      sqs.destroy();
      dynamodb?.destroy();
    },
  };
}

/** Runs against the local service must stay on this machine. */
export function assertLoopback(url: string, what: string): void {
  const host = new URL(url).hostname;
  if (host !== '127.0.0.1') throw new Error(`${what} is ${url}; the local service must listen on 127.0.0.1`);
}
