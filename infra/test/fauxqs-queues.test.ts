import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fauxqsModule } from '../src/local/fauxqs-persistence.js';

/**
 * fauxqs as patched here (patches/fauxqs@2.4.1.patch). A queue keeps its delayed messages in a
 * heap by the time each becomes visible, so a receive looks at those that are due, not at every
 * delayed one: a message is handed out once its delay is over and not before, earliest first
 * whatever order they were sent in, also after the store is read back from its data directory.
 * And a standard queue whose messages carry a MessageGroupId is fair, as SQS's fair queues are:
 * its ready messages are handed out in turns by group. These tests drive its store with a fake clock.
 */

interface StoredMessage {
  readonly body: string;
}
interface Queue {
  enqueue(message: StoredMessage): void;
  dequeue(maxCount: number): readonly { readonly Body: string }[];
}
interface Store {
  createQueue(name: string, url: string, arn: string, attributes?: Readonly<Record<string, string>>): Queue;
  getQueue(url: string): Queue | undefined;
  persistence?: unknown;
}
interface StoreClass {
  new (): Store;
  createMessage(body: string, attributes: Record<string, never>, delaySeconds?: number, messageGroupId?: string): StoredMessage;
}
interface TopicStore {
  createTopic(name: string, attributes?: Readonly<Record<string, string>>, tags?: undefined, region?: string): { readonly arn: string };
  subscribe(topicArn: string, protocol: 'sqs', endpoint: string, attributes?: Readonly<Record<string, string>>): unknown;
}
/** SNS's Publish and PublishBatch as fauxqs takes them: the request's query parameters, flattened. */
type PublishAction = (params: Readonly<Record<string, string>>, snsStore: TopicStore, sqsStore: Store) => unknown;
interface Persistence {
  load(sqsStore: Store, snsStore: unknown, s3Store: unknown): void;
  close(): void;
}

const { SqsStore } = await fauxqsModule<{ SqsStore: StoreClass }>('./sqs/sqsStore.js');
const { SnsStore } = await fauxqsModule<{ SnsStore: new () => TopicStore }>('./sns/snsStore.js');
const { publish, publishBatch } = await fauxqsModule<{ publish: PublishAction; publishBatch: PublishAction }>('./sns/actions/publish.js');
const { S3Store } = await fauxqsModule<{ S3Store: new () => unknown }>('./s3/s3Store.js');
const { PersistenceManager } = await fauxqsModule<{ PersistenceManager: new (dataDir: string) => Persistence }>('./persistence.js');

const QUEUE_URL = 'http://127.0.0.1:1/000000000000/delays';
const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:delays';

/** A queue whose received messages stay hidden for the whole test: each is handed out once. */
function newQueue(store: Store): Queue {
  return store.createQueue('delays', QUEUE_URL, QUEUE_ARN, { VisibilityTimeout: '43200' });
}

/** The bodies a receive gets now, one request of up to ten. */
function receive(queue: Queue): string[] {
  return queue.dequeue(10).map((message) => message.Body);
}

/** Sends each body with its delay, in this order. */
function send(queue: Queue, messages: readonly (readonly [string, number])[]): void {
  for (const [body, delaySeconds] of messages) queue.enqueue(SqsStore.createMessage(body, {}, delaySeconds));
}

describe('fauxqs: delayed messages', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-01-01T00:00:00.000Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('hands each one out once its delay is over and not before, earliest first, whatever order they were sent in', () => {
    const queue = newQueue(new SqsStore());
    send(queue, [
      ['in 3 s', 3],
      ['in 1 s', 1],
      ['in 2 s (first)', 2],
      ['now', 0],
      ['in 2 s (second)', 2],
    ]);
    expect(receive(queue)).toEqual(['now']);
    vi.advanceTimersByTime(999);
    expect(receive(queue)).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(receive(queue)).toEqual(['in 1 s']);
    vi.advanceTimersByTime(1500);
    // Due at the same time: in the order they were sent.
    expect(receive(queue)).toEqual(['in 2 s (first)', 'in 2 s (second)']);
    expect(receive(queue)).toEqual([]);
    vi.advanceTimersByTime(500);
    expect(receive(queue)).toEqual(['in 3 s']);
  });

  it('keeps thousands sent in shuffled order, handing each out in its own second', () => {
    const queue = newQueue(new SqsStore());
    const delays = Array.from({ length: 3000 }, (_, index) => 1 + ((index * 7919) % 900));
    send(
      queue,
      delays.map((delay, index) => [`${delay}:${index}`, delay]),
    );
    const seen: number[] = [];
    for (let second = 1; second <= 900; second++) {
      vi.advanceTimersByTime(1000);
      for (let bodies = receive(queue); bodies.length > 0; bodies = receive(queue)) {
        for (const body of bodies) {
          expect(Number(body.split(':')[0])).toBe(second);
          seen.push(second);
        }
      }
    }
    expect(seen).toHaveLength(delays.length);
  });

  it('keeps the order of those it reads back from its data directory', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fauxqs-delays-'));
    try {
      const written = new PersistenceManager(dataDir);
      const before = new SqsStore();
      before.persistence = written;
      // Written through to the data directory as it is sent, as the local service's fauxqs does.
      const queue = newQueue(before);
      send(queue, [
        ['in 30 s', 30],
        ['in 10 s', 10],
        ['in 20 s', 20],
      ]);
      written.close();

      const read = new PersistenceManager(dataDir);
      const after = new SqsStore();
      read.load(after, new SnsStore(), new S3Store());
      const restored = after.getQueue(QUEUE_URL);
      expect(restored).toBeDefined();
      const order: string[] = [];
      for (let second = 1; second <= 30; second++) {
        vi.advanceTimersByTime(1000);
        order.push(...receive(restored as Queue));
      }
      expect(order).toEqual(['in 10 s', 'in 20 s', 'in 30 s']);
      read.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('fauxqs: a standard queue with message groups', () => {
  /** Sends each body under its group (none for undefined), in this order. */
  const sendGrouped = (queue: Queue, messages: readonly (readonly [string, string | undefined])[]): void => {
    for (const [body, group] of messages) queue.enqueue(SqsStore.createMessage(body, {}, undefined, group));
  };

  it('hands its ready messages out in turns by group, each group in the order it was sent', () => {
    const queue = newQueue(new SqsStore());
    sendGrouped(queue, [
      ...Array.from({ length: 25 }, (_, index): [string, string] => [`noisy ${index}`, 'noisy']),
      ['quiet 0', 'quiet'],
      ['no group 0', undefined],
      ['quiet 1', 'quiet'],
    ]);
    expect(receive(queue)).toEqual([
      'noisy 0',
      'quiet 0',
      'no group 0',
      'noisy 1',
      'quiet 1',
      'noisy 2',
      'noisy 3',
      'noisy 4',
      'noisy 5',
      'noisy 6',
    ]);
    expect(receive(queue)).toEqual(Array.from({ length: 10 }, (_, index) => `noisy ${index + 7}`));
    expect(receive(queue)).toEqual(Array.from({ length: 8 }, (_, index) => `noisy ${index + 17}`));
    expect(receive(queue)).toEqual([]);
  });

  it('takes a group that comes behind a backlog of 50,000 of another at its next turn', () => {
    const queue = newQueue(new SqsStore());
    sendGrouped(
      queue,
      Array.from({ length: 50_000 }, (_, index): [string, string] => [`noisy ${index}`, 'noisy']),
    );
    expect(receive(queue)).toHaveLength(10);
    sendGrouped(queue, [['quiet', 'quiet']]);
    expect(receive(queue).slice(0, 2)).toContain('quiet');
    let left = 0;
    for (let bodies = receive(queue); bodies.length > 0; bodies = receive(queue)) left += bodies.length;
    expect(left).toBe(50_000 - 19);
  });
});

describe('fauxqs: a standard topic and its SQS subscriptions', () => {
  /** Two tenants' input topics delivering to one queue, as the registered tenants' topics deliver to the ingest queue. */
  const tenantsOnOneQueue = () => {
    const sqsStore = new SqsStore();
    const snsStore = new SnsStore();
    const queue = newQueue(sqsStore);
    const topics = Object.fromEntries(
      ['noisy', 'quiet'].map((tenant) => {
        const { arn } = snsStore.createTopic(`${tenant}-input`, {}, undefined, 'us-east-1');
        snsStore.subscribe(arn, 'sqs', QUEUE_ARN, { RawMessageDelivery: 'true' });
        return [tenant, arn];
      }),
    ) as Record<'noisy' | 'quiet', string>;
    return { sqsStore, snsStore, queue, topics };
  };

  it("forwards a publish's MessageGroupId, as SNS does to a fair queue: one tenant's flood on its topic does not hold back another's next request", () => {
    const { sqsStore, snsStore, queue, topics } = tenantsOnOneQueue();
    for (let from = 0; from < 30; from += 10) {
      const entries = Array.from({ length: 10 }, (_, index) => [
        [`PublishBatchRequestEntries.member.${index + 1}.Id`, `m${index}`],
        [`PublishBatchRequestEntries.member.${index + 1}.Message`, `noisy ${from + index}`],
        [`PublishBatchRequestEntries.member.${index + 1}.MessageGroupId`, 'noisy'],
      ]).flat();
      publishBatch({ TopicArn: topics.noisy, ...Object.fromEntries(entries) }, snsStore, sqsStore);
    }
    publish({ TopicArn: topics.quiet, Message: 'quiet 0', MessageGroupId: 'quiet' }, snsStore, sqsStore);
    expect(receive(queue)).toEqual(['noisy 0', 'quiet 0', ...Array.from({ length: 8 }, (_, index) => `noisy ${index + 1}`)]);
  });

  it('keeps publishes without a MessageGroupId in one group, behind each other in the order they came', () => {
    const { sqsStore, snsStore, queue, topics } = tenantsOnOneQueue();
    for (let index = 0; index < 12; index += 1) publish({ TopicArn: topics.noisy, Message: `noisy ${index}` }, snsStore, sqsStore);
    publish({ TopicArn: topics.quiet, Message: 'quiet 0' }, snsStore, sqsStore);
    expect(receive(queue)).toEqual(Array.from({ length: 10 }, (_, index) => `noisy ${index}`));
    expect(receive(queue)).toEqual(['noisy 10', 'noisy 11', 'quiet 0']);
  });
});
