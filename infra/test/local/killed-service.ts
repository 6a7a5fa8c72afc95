import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PublishCommand } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { clientsFor, createSchedulerTarget, TopicSubscriber } from '@adhoc-scheduler/quickstart/client-topics';
import { DynamoDbEventListing } from '@adhoc-scheduler/shared';
import { takenPorts } from '../../src/local/emulators.js';
import { LOCAL_CREDENTIALS, LOCAL_EMITTER_ROLE_ARN, type LocalOutputs } from '../../src/local/runtime.js';
import { FAST_TIMINGS, freePort, uniqueName, waitFor, type Delivery } from './kit.js';
import { outputsOf, spawnService, type ServiceProcess } from './service-process.js';

/** A queue's messages by where they are: waiting out their delay, visible, or received and not yet deleted. */
export interface QueueDepth {
  readonly delayed: number;
  readonly visible: number;
  readonly inFlight: number;
}

/**
 * The local service in a process of its own, killed with SIGKILL and started again on the same
 * data directory and endpoint (as a user's scripts/start keeps them); with what a test reads to
 * know the state it kills in: the table's records, the queues' depths, a target's deliveries.
 */
export class KillableService {
  private running: ServiceProcess | undefined;
  private current:
    | { readonly outputs: LocalOutputs; readonly clients: ReturnType<typeof clientsFor>; readonly table: DynamoDBDocumentClient }
    | undefined;

  private constructor(
    private readonly dir: string,
    private readonly port: number,
  ) {}

  static async create(label: string): Promise<KillableService> {
    return new KillableService(await mkdtemp(join(tmpdir(), `scheduler-${label}-`)), await freePort());
  }

  get outputs(): LocalOutputs {
    if (!this.current) throw new Error('the service is not running');
    return this.current.outputs;
  }

  /** Starts the service (scripts/start's entry point, or `entry`) and waits until it is ready. */
  async start(
    options: { readonly entry?: string; readonly args?: readonly string[]; readonly env?: Readonly<Record<string, string>> } = {},
  ): Promise<LocalOutputs> {
    const service = spawnService(await mkdtemp(join(this.dir, 'run-')), {
      args: ['--data-dir', join(this.dir, 'data'), '--port', String(this.port), ...(options.args ?? [])],
      env: { ...FAST_TIMINGS, LOG_LEVEL: 'warn', ...options.env },
      ...(options.entry === undefined ? {} : { entry: options.entry }),
    });
    this.running = service;
    const outputs = await outputsOf(service);
    const access = { region: outputs.region, credentials: LOCAL_CREDENTIALS };
    const table = DynamoDBDocumentClient.from(new DynamoDBClient({ ...access, endpoint: outputs.dynamodbEndpoint }));
    this.current = { outputs, clients: clientsFor({ ...access, endpoint: outputs.endpoint }), table };
    return outputs;
  }

  /**
   * SIGKILL: no handler runs, nothing is flushed. Resolves once the process is gone and its
   * emulators, which exit when they notice, have let go of their ports (and so of the data).
   */
  async kill(): Promise<void> {
    const service = this.running;
    if (!service) return;
    this.running = undefined;
    service.child.kill('SIGKILL');
    await service.exited;
    const dynamodb = this.current === undefined ? 0 : Number(new URL(this.current.outputs.dynamodbEndpoint).port);
    const ports = { messaging: this.port, dynamodb };
    this.current?.clients.sns.destroy();
    this.current?.clients.sqs.destroy();
    this.current?.table.destroy();
    this.current = undefined;
    await waitFor(async () => (await takenPorts(ports)).length === 0, "the killed service's emulators gone", 60_000);
  }

  get clients(): ReturnType<typeof clientsFor> {
    if (!this.current) throw new Error('the service is not running');
    return this.current.clients;
  }

  /** Publishes a schedule request to the shared input topic; resolves with its event's id. */
  async schedule(request: Record<string, unknown>): Promise<string> {
    const message = JSON.stringify(request);
    const { MessageId } = await this.clients.sns.send(new PublishCommand({ TopicArn: this.outputs.inputTopicArn, Message: message }));
    return `m-${MessageId}`;
  }

  records(): DynamoDbEventListing {
    if (!this.current) throw new Error('the service is not running');
    return new DynamoDbEventListing(this.current.table, this.current.outputs.tableName);
  }

  async depth(queueUrl: string): Promise<QueueDepth> {
    const { Attributes = {} } = await this.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    return {
      delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
      visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    };
  }

  /** Kills the service if it still runs and removes its data. */
  async dispose(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * A client's topic granting the emitter role, and its subscribed queue, made once: the service
 * keeps both across restarts, and `read` starts reading the queue again after each one. Every
 * delivery lands in `deliveries`, whichever run of the service published it.
 */
export class KilledServiceTarget {
  readonly deliveries: Delivery[] = [];
  private reader: TopicSubscriber | undefined;

  private constructor(readonly topicArn: string) {}

  static async create(service: KillableService, label: string): Promise<KilledServiceTarget> {
    const name = uniqueName(label);
    const target = new KilledServiceTarget(await createSchedulerTarget(service.clients.sns, name, LOCAL_EMITTER_ROLE_ARN));
    // A kill ends the long polls (onError): no receive is aborted, which in fauxqs can swallow a message.
    target.reader = await TopicSubscriber.subscribe(service.clients, target.topicArn, name, (message) => target.deliveries.push(message), {
      onError: () => undefined,
    });
    return target;
  }

  /** The subscribed queue, whose URL stays the same across restarts (the endpoint does). */
  get queueUrl(): string {
    if (!this.reader) throw new Error('not subscribed');
    return this.reader.queueUrl;
  }

  /** Reads the queue through the service as it now runs. */
  read(service: KillableService): void {
    this.reader = TopicSubscriber.read(service.clients, this.topicArn, this.queueUrl, (message) => this.deliveries.push(message), {
      onError: () => undefined,
    });
  }

  withPayload(payload: string): Delivery[] {
    return this.deliveries.filter((delivery) => delivery.body === payload);
  }

  async stop(): Promise<void> {
    await this.reader?.stop();
  }
}
