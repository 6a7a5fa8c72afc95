import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createServer } from 'node:net';
import { PublishBatchCommand, PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { clientsFor, createSchedulerTarget, TopicSubscriber, type Received } from '@adhoc-scheduler/quickstart/client-topics';
import { createLogger, EMISSION_ATTRIBUTE, type ServiceLogger, type TenantsDocument } from '@adhoc-scheduler/shared';
import { Writable } from 'node:stream';
import { inject } from 'vitest';
import {
  LOCAL_CREDENTIALS,
  LOCAL_EMITTER_ROLE_ARN,
  LOCAL_REGION,
  startLocalScheduler,
  type LocalOutputs,
  type LocalScheduler,
  type LocalSchedulerOptions,
} from '../../src/local/runtime.js';
import type { Emulators } from '../../src/local/emulators.js';
import type { EmulatorEndpoints } from './shared-emulators.js';

/**
 * Short timings so far-path tests take seconds: window 6 s, loader every 1 s looking 4 s ahead,
 * and a first tick that looks back one minute (a new table holds nothing older). Two shards, not
 * four: a tick queries each tenant's shards and each bucket's, for loading and for the sweep, and
 * on the DynamoDB Local every test shares that was most of an idle scheduler's cost (0.045 CPU
 * seconds a second with four, 0.018 with two); two still spread events over more than one shard.
 */
export const FAST_TIMINGS = {
  SCHEDULER_LOADER_INITIAL_CATCH_UP_SECONDS: '60',
  SCHEDULER_NEAR_PATH_WINDOW_SECONDS: '6',
  SCHEDULER_LOADER_INTERVAL_SECONDS: '1',
  SCHEDULER_LOADER_LOOKAHEAD_SECONDS: '4',
  SCHEDULER_BUCKET_SECONDS: '5',
  SCHEDULER_SHARD_COUNT: '2',
  // The shortest the emitter's default lead allows: changes close 4 s before the due time.
  SCHEDULER_CHANGE_CUTOFF_SECONDS: '4',
  // A registry changed by a test is in force within a second.
  SCHEDULER_REGISTRY_MAX_AGE_MS: '1000',
} as const;

/**
 * The run's DynamoDB Local and fauxqs, started once for every test file of the emulators project
 * (vitest.config.ts; see shared-emulators.ts). Their stop() does nothing: the run stops them.
 */
export function sharedEmulators(): Emulators {
  const endpoints: EmulatorEndpoints | undefined = inject('emulatorEndpoints');
  if (endpoints === undefined) {
    throw new Error('no shared emulators: this file belongs in the "emulators" project of vitest.config.ts, whose globalSetup starts them');
  }
  return { ...endpoints, stop: async () => undefined };
}

export function uniqueName(label: string): string {
  return `${label}-${randomBytes(4).toString('hex')}`;
}

/** Log lines captured as objects, so tests can assert on what the service logged. */
export function capturingLogger(): { readonly logger: ServiceLogger; readonly lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('info', { destination: sink }), lines };
}

/**
 * A short visibility timeout makes retries quick; it still outlasts the emitter's hold on a
 * message (lead + 1 s of early arrival, then the publish), as the stack's 90 s does on AWS.
 */
const TEST_VISIBILITY_TIMEOUT_SECONDS = 3;

export async function startTestScheduler(
  emulators: Emulators,
  options: Omit<LocalSchedulerOptions, 'emulators'> = {},
): Promise<LocalScheduler> {
  return startLocalScheduler({
    logger: capturingLogger().logger,
    visibilityTimeoutSeconds: TEST_VISIBILITY_TIMEOUT_SECONDS,
    ...options,
    emulators,
  });
}

/** A local service with its tenants and outputs files, as scripts/start leaves them for the admin tools and the console. */
export interface ServiceWithFiles {
  readonly scheduler: LocalScheduler;
  readonly dir: string;
  readonly tenantsFile: string;
  readonly outputsFile: string;
  /** The options an admin command names this service by. */
  readonly where: readonly string[];
  /** Stops the service, and removes its directory unless the caller gave it. */
  stop(): Promise<void>;
}

/**
 * Starts a test scheduler (FAST_TIMINGS unless `env` says otherwise) whose registry is the file
 * tenants.json in `dir` (written first when `tenants` is given; absent, only the public tenant),
 * and writes its outputs to outputs.json there, as scripts/start does once it is ready. Without
 * `dir`, a directory of its own.
 */
export async function startServiceWithFiles(
  emulators: Emulators,
  options: Omit<LocalSchedulerOptions, 'emulators' | 'tenants'> & { readonly dir?: string; readonly tenants?: TenantsDocument } = {},
): Promise<ServiceWithFiles> {
  const { dir: given, tenants, ...schedulerOptions } = options;
  const dir = given ?? (await mkdtemp(join(tmpdir(), 'service-')));
  const tenantsFile = join(dir, 'tenants.json');
  const outputsFile = join(dir, 'outputs.json');
  if (tenants) await writeFile(tenantsFile, JSON.stringify(tenants));
  const scheduler = await startTestScheduler(emulators, { env: FAST_TIMINGS, ...schedulerOptions, tenants: { file: tenantsFile } });
  await writeFile(outputsFile, JSON.stringify(scheduler.outputs));
  return {
    scheduler,
    dir,
    tenantsFile,
    outputsFile,
    where: ['--outputs', outputsFile, '--tenants', tenantsFile],
    async stop() {
      await scheduler.stop();
      if (given === undefined) await rm(dir, { recursive: true, force: true });
    },
  };
}

export type Delivery = Received;

/** A client's SNS topic (granting the emitter role), with a subscribed queue recording every arrival. */
export class TopicConsumer {
  readonly deliveries: Delivery[] = [];

  private constructor(private subscriber: TopicSubscriber | undefined) {}

  get topicArn(): string {
    if (!this.subscriber) throw new Error('not subscribed');
    return this.subscriber.topicArn;
  }

  static async create(endpoint: string, label: string): Promise<TopicConsumer> {
    const clients = clientsFor({ region: LOCAL_REGION, endpoint, credentials: LOCAL_CREDENTIALS });
    const name = uniqueName(label);
    const topicArn = await createSchedulerTarget(clients.sns, name, LOCAL_EMITTER_ROLE_ARN);
    const consumer = new TopicConsumer(undefined);
    consumer.subscriber = await TopicSubscriber.subscribe(clients, topicArn, name, (message) => consumer.deliveries.push(message));
    return consumer;
  }

  /** Deliveries whose body is `payload`. */
  withPayload(payload: string): Delivery[] {
    return this.deliveries.filter((delivery) => delivery.body === payload);
  }

  /** Failure notices, parsed. */
  notices(): { reason: string; message: string; eventId?: string; event: unknown }[] {
    return this.deliveries.map((delivery) => JSON.parse(delivery.body) as { reason: string; message: string; event: unknown });
  }

  async stop(): Promise<void> {
    await this.subscriber?.stop();
  }
}

/** A client of the scheduler: publishes requests to an input topic (the shared one unless told otherwise). */
export class SchedulerClient {
  private readonly sns: SNSClient;
  private readonly sqs: SQSClient;

  /** With `messageGroupId`, every publish names it (as a tenant's client names its tenant, docs/clients.md). */
  constructor(
    private readonly scheduler: LocalScheduler,
    private readonly topicArn = scheduler.outputs.inputTopicArn,
    private readonly messageGroupId?: string,
  ) {
    const access = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.endpoint };
    this.sns = new SNSClient(access);
    this.sqs = new SQSClient(access);
  }

  async publish(request: unknown): Promise<string> {
    const message = typeof request === 'string' ? request : JSON.stringify(request);
    const { MessageId } = await this.sns.send(
      new PublishCommand({ TopicArn: this.topicArn, Message: message, MessageGroupId: this.messageGroupId }),
    );
    return MessageId ?? '';
  }

  async publishBatch(requests: readonly unknown[]): Promise<void> {
    for (let i = 0; i < requests.length; i += 10) {
      const { Failed = [] } = await this.sns.send(
        new PublishBatchCommand({
          TopicArn: this.topicArn,
          PublishBatchRequestEntries: requests.slice(i, i + 10).map((request, index) => ({
            Id: `r${i + index}`,
            Message: typeof request === 'string' ? request : JSON.stringify(request),
            MessageGroupId: this.messageGroupId,
          })),
        }),
      );
      if (Failed.length > 0) throw new Error(`publish batch failed: ${JSON.stringify(Failed)}`);
    }
  }

  /**
   * Delivers an input exactly as SNS would deliver it again: the same envelope, the same MessageId, into the topic's ingest queue;
   * with `publishedAt`, stamped as published then (SNS's Timestamp), as a message that took long on its way would be.
   */
  async redeliver(request: unknown, snsMessageId: string, publishedAt?: number): Promise<void> {
    const envelope = {
      Type: 'Notification',
      MessageId: snsMessageId,
      TopicArn: this.topicArn,
      Message: JSON.stringify(request),
      ...(publishedAt === undefined ? {} : { Timestamp: new Date(publishedAt).toISOString() }),
    };
    const { inputTopicArn, publicIngestQueueUrl, ingestQueueUrl } = this.scheduler.outputs;
    const queueUrl = this.topicArn === inputTopicArn ? publicIngestQueueUrl : ingestQueueUrl;
    await this.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(envelope) }));
  }

  destroy(): void {
    this.sns.destroy();
    this.sqs.destroy();
  }
}

export function request(target: string, dueAt: number, payload: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { date: new Date(dueAt).toISOString(), target, user: 'tests', payload, ...extra };
}

/**
 * A series request whose first occurrence is `leadMs` from now, then one a minute: rate() counts
 * its minutes from its start's (when it is published), plus its offset.
 */
export function seriesDueSoon(target: string, leadMs: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { schedule: 'rate(1 minute)', offset: (Date.now() + leadMs) % 60_000, target, user: 'tests', payload: 'every minute', ...extra };
}

/** Polls a condition until it holds (never a fixed sleep); fails with the last state after `timeoutMs`. */
type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

export async function waitFor<T>(probe: () => T | Promise<T>, description: string, timeoutMs = 20_000): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * An item of a service's table as it stands (a consistent read), whatever its kind: an event's
 * record, a series', a payload item. Read by a client of the test's own, so that no fault or
 * count the service's clients carry touches it, and the service may be stopped.
 */
export async function storedItem(
  service: { readonly outputs: Pick<LocalOutputs, 'dynamodbEndpoint' | 'tableName'> },
  id: string,
): Promise<Record<string, unknown> | undefined> {
  const { dynamodbEndpoint, tableName } = service.outputs;
  const table = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: dynamodbEndpoint }),
  );
  try {
    const { Item } = await table.send(new GetCommand({ TableName: tableName, Key: { id }, ConsistentRead: true }));
    return Item;
  } finally {
    table.destroy();
  }
}

/** Scheduled time of a delivery, from the attribute the emitter sets. */
export function scheduledAt(delivery: Delivery): number {
  return Date.parse(delivery.attributes[EMISSION_ATTRIBUTE.scheduledAt] ?? '');
}

/** When the emitter published a delivery, from the attribute it sets (its own clock as it called SNS). */
export function publishedAt(delivery: Delivery | undefined): number {
  return Date.parse(delivery?.attributes[EMISSION_ATTRIBUTE.publishedAt] ?? '');
}

/**
 * Never early, measured where it happens: the emitter published the delivery at or after its due
 * time (`dueAt`, else its scheduled-at attribute). A consumer's receive time comes later than
 * the publish, so it could not show a publish a few milliseconds early.
 */
export function expectNotEarly(delivery: Delivery | undefined, dueAt = delivery === undefined ? Number.NaN : scheduledAt(delivery)): void {
  expect(delivery, 'a delivery').toBeDefined();
  const eventId = delivery?.attributes[EMISSION_ATTRIBUTE.eventId];
  expect(publishedAt(delivery), `${EMISSION_ATTRIBUTE.publishedAt} of ${eventId}`).toBeGreaterThanOrEqual(dueAt);
}

/** A port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise<number>((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** An endpoint where nothing answers any more: what the outputs of a service killed with kill -9 name. */
export async function closedEndpoint(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}

/** Whether a DynamoDB request records emissions' ends (the emitter's batched transaction). */
export function recordsEnds(commandName: string, input: unknown): boolean {
  const items = (input as { TransactItems?: { Update?: { ExpressionAttributeNames?: Record<string, string> } }[] }).TransactItems ?? [];
  return (
    commandName === 'TransactWriteItemsCommand' &&
    items.some((item) => Object.values(item.Update?.ExpressionAttributeNames ?? {}).includes('endedBy'))
  );
}
