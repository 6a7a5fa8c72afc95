import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type MessageAttributeValue,
  type SQSClientConfig,
} from '@aws-sdk/client-sqs';
import { chunks, DEFAULTS, delaySecondsFor, DynamoDbLastErrors, SQS_BATCH_ENTRIES, type LastError } from '@adhoc-scheduler/shared';
import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { LOCAL_CREDENTIALS } from '../local/runtime.js';
import { DEAD_LETTER_SOURCES, type DeadLetterSource } from '../cdk/stack-outputs.js';
import { readDeadLetterBody, type DeadLetterBody } from './dead-letter-bodies.js';
import { AdminError } from './errors.js';
import { readRunningLocalOutputs } from './local-outputs.js';
import { readStackOutputs, withTable, type Location } from './location.js';

/** A message of a dead-letter queue, as peeked: what its body says, what SQS says of it, and its last error. */
export interface DeadLetter extends DeadLetterBody {
  readonly messageId: string;
  readonly body: string;
  readonly messageAttributes: Readonly<Record<string, MessageAttributeValue>> | undefined;
  /** Deliveries SQS counts, the peeks of the dead-letter tools included. */
  readonly receiveCount: number;
  /** When it was first sent to its queue (SQS keeps it through the move), epoch ms. */
  readonly sentAt: number;
  readonly lastError: LastError | undefined;
}

/** What a peek holds of a message: the dead-letter queue it is in, and the receipt that lets it be deleted or let go. */
interface Held {
  readonly deadLetterQueueUrl: string;
  readonly receiptHandle: string;
}

/**
 * How long a peeked message stays hidden: longer than a command takes to look at what it peeked
 * and act on it, short enough that an interrupted command leaves nothing hidden for long. A
 * command lets what it did not delete go at once when it ends.
 */
export const PEEK_VISIBILITY_SECONDS = 60;
/** How long a receive waits for messages: a long poll asks every SQS server, so an empty answer means an empty queue. */
const PEEK_WAIT_SECONDS = 1;

/** A dead-letter queue to read: `source` when it serves one queue (a deployed stack), undefined when the body tells (the local service). */
interface DeadLetterQueue {
  readonly url: string;
  readonly source: DeadLetterSource | undefined;
}

/**
 * The dead-letter queues of the local service or of a deployed stack, and the queues their
 * messages go back to. The local service has one dead-letter queue for every queue (a message's
 * body tells its queue); a stack has one per queue, and outputs their URLs.
 */
export class DeadLetterQueues {
  private readonly held = new Map<string, Held>();

  private constructor(
    private readonly sqs: SQSClient,
    private readonly deadLetterQueues: readonly DeadLetterQueue[],
    private readonly queueUrls: Readonly<Partial<Record<DeadLetterSource, string>>>,
    private readonly inputTopicArn: string,
    private readonly location: Location,
    private readonly described: string,
  ) {}

  /** The dead-letter queues of these sources at a location; an AdminError when it cannot be reached or does not say where they are. */
  static async connect(location: Location, sources: readonly DeadLetterSource[]): Promise<DeadLetterQueues> {
    if (location.kind === 'local') {
      const { outputs } = await readRunningLocalOutputs(location.outputs);
      const all = outputs as typeof outputs & Partial<Record<string, unknown>>;
      const url = (key: string): string | undefined => {
        const value = all[key];
        return typeof value === 'string' ? value : undefined;
      };
      const deadLetterQueueUrl = url('deadLetterQueueUrl');
      if (deadLetterQueueUrl === undefined)
        throw new AdminError(`${location.outputs} names no deadLetterQueueUrl: is it written by scripts/start?`);
      const client: SQSClientConfig = { region: outputs.region, endpoint: outputs.endpoint, credentials: LOCAL_CREDENTIALS };
      const queueUrls = {
        ingest: outputs.ingestQueueUrl,
        'public-ingest': url('publicIngestQueueUrl'),
        loading: url('loadingQueueUrl'),
        delay: url('delayQueueUrl'),
        changes: url('changesQueueUrl'),
      };
      return new DeadLetterQueues(
        new SQSClient(client),
        [{ url: deadLetterQueueUrl, source: undefined }],
        queueUrls,
        outputs.inputTopicArn,
        location,
        `the local service's dead-letter queue (${outputs.endpoint})`,
      );
    }
    if (location.stackOutputs === undefined)
      throw new AdminError(
        'dead-letters reads a deployed stack through its outputs: name them with --stack-outputs FILE (cdk deploy --outputs-file)',
      );
    const stack = await readStackOutputs(location.stackOutputs);
    const missing = sources.filter((source) => stack.queues[source] === undefined);
    // `all` takes the queues the stack has; a queue named on its own must be there.
    if (missing.length > 0 && sources.length === 1)
      throw new AdminError(
        `${location.stackOutputs} has no ${missing.join(', ')} queue: this stack outputs no URL of it or of its dead-letter queue`,
      );
    if (stack.inputTopicArn === undefined) throw new AdminError(`${location.stackOutputs} has no InputTopicArn output`);
    const region = location.region ?? stack.region;
    const client: SQSClientConfig = { ...(region ? { region } : {}), ...(location.profile ? { profile: location.profile } : {}) };
    const deadLetterQueues = sources.flatMap((source) => {
      const urls = stack.queues[source];
      return urls === undefined ? [] : [{ url: urls.deadLetterQueueUrl, source }];
    });
    const queueUrls: Partial<Record<DeadLetterSource, string>> = {};
    for (const source of DEAD_LETTER_SOURCES) queueUrls[source] = stack.queues[source]?.queueUrl;
    return new DeadLetterQueues(
      new SQSClient(client),
      deadLetterQueues,
      queueUrls,
      stack.inputTopicArn,
      location,
      `the dead-letter queues of ${location.stackOutputs}${region ? ` in ${region}` : ''}`,
    );
  }

  /**
   * Peeks at the messages of the dead-letter queues until `limit` are chosen or none is left, and
   * returns the chosen ones with their last errors. Every message peeked stays hidden until
   * `release` (or for PEEK_VISIBILITY_SECONDS), so none is seen twice.
   */
  async peek(choose: (letter: DeadLetter) => boolean, limit: number): Promise<DeadLetter[]> {
    const chosen: Omit<DeadLetter, 'lastError'>[] = [];
    for (const queue of this.deadLetterQueues) {
      while (chosen.length < limit) {
        const { Messages = [] } = await this.sqsCall('ReceiveMessage', () =>
          this.sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: queue.url,
              MaxNumberOfMessages: SQS_BATCH_ENTRIES,
              VisibilityTimeout: PEEK_VISIBILITY_SECONDS,
              WaitTimeSeconds: PEEK_WAIT_SECONDS,
              MessageSystemAttributeNames: ['All'],
              MessageAttributeNames: ['All'],
            }),
          ),
        );
        if (Messages.length === 0) break;
        for (const message of Messages) {
          const { MessageId: messageId, ReceiptHandle: receiptHandle, Body: body = '' } = message;
          if (messageId === undefined || receiptHandle === undefined) continue;
          // SQS may hand a message out twice: the latest receipt is the one that deletes it.
          const seen = this.held.has(messageId);
          this.held.set(messageId, { deadLetterQueueUrl: queue.url, receiptHandle });
          if (seen) continue;
          const read = readDeadLetterBody(body, this.inputTopicArn);
          const letter = {
            ...read,
            source: queue.source ?? read.source,
            messageId,
            body,
            messageAttributes: message.MessageAttributes,
            receiveCount: Number(message.Attributes?.ApproximateReceiveCount) || 0,
            sentAt: Number(message.Attributes?.SentTimestamp) || 0,
          };
          if (chosen.length < limit && choose({ ...letter, lastError: undefined })) chosen.push(letter);
        }
      }
    }
    const lastErrors =
      chosen.length === 0
        ? new Map<string, LastError>()
        : await withTable(this.location, (client, tableName) =>
            new DynamoDbLastErrors(client, tableName).read(chosen.map(({ messageId }) => messageId)),
          );
    return chosen.map((letter) => ({ ...letter, lastError: lastErrors.get(letter.messageId) }));
  }

  /** The queue a message goes back to; undefined when its source is unknown or this location has no such queue. */
  queueUrlOf(letter: Pick<DeadLetter, 'source'>): string | undefined {
    return letter.source === undefined ? undefined : this.queueUrls[letter.source];
  }

  /**
   * Sends a peeked message back to the queue it came from, then deletes it from the dead-letter
   * queue: a crash between the two leaves it in both, never in neither. The body goes back as it
   * is, never unwrapped nor wrapped anew: ingest reads the tenant from the envelope SNS wrote, and
   * a request's text, which anyone may have shaped as an envelope, never becomes one. A delay-queue event's copy waits in the
   * delay queue as ingest's copy would (the emitter still waits for the due time itself).
   */
  async redrive(letter: DeadLetter, now: number): Promise<void> {
    const queueUrl = this.queueUrlOf(letter);
    if (queueUrl === undefined) throw new AdminError(`message ${letter.messageId}: no queue to send it back to`);
    const delay =
      letter.source === 'delay'
        ? {
            // The stack's lead may differ from the default: the delay only spares the emitter a long hold.
            DelaySeconds: letter.dueAt === undefined ? 0 : delaySecondsFor(letter.dueAt, now, DEFAULTS.emitterLeadMs),
            // The delay queue is a fair queue on AWS, by tenant, as the functions send to it.
            ...(letter.tenant === undefined ? {} : { MessageGroupId: letter.tenant }),
          }
        : {};
    await this.sqsCall('SendMessage', () =>
      this.sqs.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: letter.body, MessageAttributes: letter.messageAttributes, ...delay }),
      ),
    );
    await this.delete(letter);
  }

  /** Deletes a peeked message from its dead-letter queue. */
  async delete(letter: Pick<DeadLetter, 'messageId'>): Promise<void> {
    const held = this.held.get(letter.messageId);
    if (held === undefined) throw new AdminError(`message ${letter.messageId} was not peeked`);
    await this.sqsCall('DeleteMessage', () =>
      this.sqs.send(new DeleteMessageCommand({ QueueUrl: held.deadLetterQueueUrl, ReceiptHandle: held.receiptHandle })),
    );
    this.held.delete(letter.messageId);
  }

  /** Lets every peeked message not deleted be seen again at once, and closes the client. */
  async close(): Promise<void> {
    try {
      const byQueue = new Map<string, Held[]>();
      for (const held of this.held.values()) byQueue.set(held.deadLetterQueueUrl, [...(byQueue.get(held.deadLetterQueueUrl) ?? []), held]);
      for (const [queueUrl, held] of byQueue) {
        for (const batch of chunks(held, SQS_BATCH_ENTRIES)) {
          await this.sqs.send(
            new ChangeMessageVisibilityBatchCommand({
              QueueUrl: queueUrl,
              Entries: batch.map(({ receiptHandle }, index) => ({ Id: `m${index}`, ReceiptHandle: receiptHandle, VisibilityTimeout: 0 })),
            }),
          );
        }
      }
    } catch {
      // Nothing lost: what could not be let go is seen again after PEEK_VISIBILITY_SECONDS.
    } finally {
      this.held.clear();
      this.sqs.destroy();
    }
  }

  private async sqsCall<T>(operation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof AdminError) throw error;
      throw new AdminError(`SQS ${operation} on ${this.described} failed: ${describeError(error)}`);
    }
  }
}
