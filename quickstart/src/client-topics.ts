import {
  CreateTopicCommand,
  DeleteTopicCommand,
  SetTopicAttributesCommand,
  SNSClient,
  SubscribeCommand,
  UnsubscribeCommand,
} from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SetQueueAttributesCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';

/** Where the client's own resources live: the local service's endpoint, or an AWS region. */
export interface ClientAccess {
  readonly region: string;
  readonly endpoint?: string | undefined;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined;
}

export function clientsFor(access: ClientAccess): { readonly sns: SNSClient; readonly sqs: SQSClient } {
  const config = { region: access.region, endpoint: access.endpoint, ...(access.credentials ? { credentials: access.credentials } : {}) };
  return { sns: new SNSClient(config), sqs: new SQSClient(config) };
}

/**
 * A topic the scheduler may publish to: its policy grants sns:Publish to the scheduler's
 * emitter role and nothing else beyond the owner's defaults.
 */
export async function createSchedulerTarget(sns: SNSClient, name: string, emitterRoleArn: string): Promise<string> {
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: name }));
  if (!TopicArn) throw new Error(`CreateTopic returned no ARN for ${name}`);
  const policy = {
    Version: '2012-10-17',
    Statement: [
      { Sid: 'SchedulerEmitterPublishes', Effect: 'Allow', Principal: { AWS: emitterRoleArn }, Action: 'sns:Publish', Resource: TopicArn },
    ],
  };
  await sns.send(new SetTopicAttributesCommand({ TopicArn, AttributeName: 'Policy', AttributeValue: JSON.stringify(policy) }));
  return TopicArn;
}

export interface Received {
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly receivedAt: number;
}

function received(message: Message, receivedAt: number): Received {
  const attributes = Object.fromEntries(
    Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [name, value.StringValue ?? '']),
  );
  return { body: message.Body ?? '', attributes, receivedAt };
}

/**
 * An SQS queue subscribed to a topic with raw delivery (so message attributes arrive as SQS
 * attributes), read by a few concurrent long polls. Records the receive time of each message.
 */
export class TopicSubscriber {
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];

  private constructor(
    private readonly clients: { readonly sns: SNSClient; readonly sqs: SQSClient },
    readonly topicArn: string,
    readonly queueUrl: string,
    /** The queue's subscription, when this subscriber made it. */
    readonly subscriptionArn: string | undefined,
  ) {}

  static async subscribe(
    clients: { readonly sns: SNSClient; readonly sqs: SQSClient },
    topicArn: string,
    queueName: string,
    onMessage: (message: Received) => void,
    options: {
      readonly receivers?: number;
      /** A receive that failed (the endpoint stopped answering): reading stops. Without it the failure is an unhandled rejection. */
      readonly onError?: (error: unknown) => void;
    } = {},
  ): Promise<TopicSubscriber> {
    const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: queueName }));
    if (!QueueUrl) throw new Error(`CreateQueue returned no URL for ${queueName}`);
    const { Attributes } = await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    const queueArn = Attributes?.QueueArn;
    // The topic may send to the queue, and only this topic.
    const policy = {
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { Service: 'sns.amazonaws.com' },
          Action: 'sqs:SendMessage',
          Resource: queueArn,
          Condition: { ArnEquals: { 'aws:SourceArn': topicArn } },
        },
      ],
    };
    let SubscriptionArn: string | undefined;
    try {
      await clients.sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { Policy: JSON.stringify(policy) } }));
      ({ SubscriptionArn } = await clients.sns.send(
        new SubscribeCommand({
          TopicArn: topicArn,
          Protocol: 'sqs',
          Endpoint: queueArn,
          Attributes: { RawMessageDelivery: 'true' },
          ReturnSubscriptionArn: true,
        }),
      ));
    } catch (error) {
      // A queue nothing can send to is of no use: it goes, and the error stands.
      await clients.sqs.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined);
      throw error;
    }
    return TopicSubscriber.read(clients, topicArn, QueueUrl, onMessage, { ...options, subscriptionArn: SubscriptionArn });
  }

  /** Reads a queue `subscribe` set up before (a service restarted on its data keeps the subscription). */
  static read(
    clients: { readonly sns: SNSClient; readonly sqs: SQSClient },
    topicArn: string,
    queueUrl: string,
    onMessage: (message: Received) => void,
    options: {
      readonly receivers?: number;
      readonly onError?: (error: unknown) => void;
      readonly subscriptionArn?: string | undefined;
    } = {},
  ): TopicSubscriber {
    const subscriber = new TopicSubscriber(clients, topicArn, queueUrl, options.subscriptionArn);
    const { onError } = options;
    subscriber.loops = Array.from({ length: options.receivers ?? 2 }, () => {
      const loop = subscriber.receiveLoop(onMessage);
      return onError === undefined ? loop : loop.catch(onError);
    });
    return subscriber;
  }

  private async receiveLoop(onMessage: (message: Received) => void): Promise<void> {
    const { sqs } = this.clients;
    while (!this.abort.signal.aborted) {
      try {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: this.queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 10,
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: this.abort.signal },
        );
        if (Messages.length === 0) continue;
        const receivedAt = Date.now();
        for (const message of Messages) onMessage(received(message, receivedAt));
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: Messages.map((message, index) => ({ Id: `m${index}`, ReceiptHandle: message.ReceiptHandle })),
          }),
        );
      } catch (error) {
        if (this.abort.signal.aborted) return;
        throw error;
      }
    }
  }

  /**
   * Stops reading; with `remove`, takes away what was made for it: `queue`, its subscription and
   * the queue (the topic is someone else's), `topic`, the topic too.
   */
  async stop(options: { readonly remove?: 'queue' | 'topic' | undefined } = {}): Promise<void> {
    this.abort.abort();
    await Promise.allSettled(this.loops);
    if (options.remove === undefined) return;
    if (this.subscriptionArn !== undefined) await this.clients.sns.send(new UnsubscribeCommand({ SubscriptionArn: this.subscriptionArn }));
    await this.clients.sqs.send(new DeleteQueueCommand({ QueueUrl: this.queueUrl }));
    if (options.remove === 'topic') await this.clients.sns.send(new DeleteTopicCommand({ TopicArn: this.topicArn }));
  }
}
