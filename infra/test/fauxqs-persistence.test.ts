import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitPerAnswer, type FauxqsApp, fauxqsModule, persistentApp } from '../src/local/fauxqs-persistence.js';

/**
 * fauxqs with its state on disk, as the local service runs it (`scripts/start`): each answer's
 * writes are in the file before the answer leaves, and they are one commit, not one per message.
 * The file is read by a connection of its own, as a restarted fauxqs would read it.
 */

const MESSAGES = 10;

let dataDir: string;
let app: Awaited<FauxqsApp>;
let file: DatabaseSync;

/** One SQS call as the SDK makes it (the JSON protocol), answered by the app. */
async function sqs(action: string, body: object): Promise<Record<string, unknown>> {
  const answer = await app.inject({
    method: 'POST',
    url: '/',
    headers: { host: '127.0.0.1:4566', 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
    payload: JSON.stringify(body),
  });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json();
}

/** Pages written to the write-ahead log so far: a commit writes each page it changed, at least one. */
function walFrames(): number {
  const pageSize = Number((file.prepare('PRAGMA page_size').get() as { page_size: number }).page_size);
  const walBytes = statSync(join(dataDir, 'fauxqs.db-wal')).size;
  return Math.max(0, Math.floor((walBytes - 32) / (pageSize + 24)));
}

function storedMessages(): { readonly received: number; readonly all: number } {
  const row = file.prepare('SELECT count(*) AS all_, count(receipt_handle) AS received FROM sqs_messages').get() as {
    all_: number;
    received: number;
  };
  return { all: row.all_, received: row.received };
}

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'fauxqs-persistence-'));
  app = await persistentApp(dataDir);
  file = new DatabaseSync(join(dataDir, 'fauxqs.db'), { readOnly: true });
});

afterEach(async () => {
  file.close();
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('fauxqs on disk', () => {
  it('has what each answer acknowledges in its file when the answer leaves, a batch of ten messages in one commit', async () => {
    const { QueueUrl } = (await sqs('CreateQueue', { QueueName: 'persisted', Attributes: { VisibilityTimeout: '300' } })) as {
      QueueUrl: string;
    };
    const entries = Array.from({ length: MESSAGES }, (_, index) => ({ Id: `m${index}`, MessageBody: `message ${index}` }));

    let before = walFrames();
    await sqs('SendMessageBatch', { QueueUrl, Entries: entries });
    expect(storedMessages()).toEqual({ all: MESSAGES, received: 0 });
    // A commit of its own for each message writes at least a page each.
    expect(walFrames() - before).toBeLessThan(MESSAGES);

    before = walFrames();
    const { Messages = [] } = (await sqs('ReceiveMessage', { QueueUrl, MaxNumberOfMessages: MESSAGES })) as {
      Messages?: { ReceiptHandle: string }[];
    };
    expect(Messages).toHaveLength(MESSAGES);
    expect(storedMessages()).toEqual({ all: MESSAGES, received: MESSAGES });
    expect(walFrames() - before).toBeLessThan(MESSAGES);

    before = walFrames();
    await sqs('DeleteMessageBatch', {
      QueueUrl,
      Entries: Messages.map(({ ReceiptHandle }, index) => ({ Id: `d${index}`, ReceiptHandle })),
    });
    expect(storedMessages()).toEqual({ all: 0, received: 0 });
    expect(walFrames() - before).toBeLessThan(MESSAGES);
  });

  it('keeps the writes made before an answer in one open transaction, committed when the answer is about to leave or the turn ends', async () => {
    const { PersistenceManager } = await fauxqsModule<{
      PersistenceManager: new (
        dir: string,
      ) => {
        readonly db: DatabaseSync;
        insertQueue(queue: object): void;
        insertMessage(queueName: string, message: object): void;
        close(): void;
      };
    }>('./persistence.js');
    const otherDir = mkdtempSync(join(tmpdir(), 'fauxqs-commits-'));
    const persistence = new PersistenceManager(otherDir);
    const reader = new DatabaseSync(join(otherDir, 'fauxqs.db'), { readOnly: true });
    const count = (): number => (reader.prepare('SELECT count(*) AS n FROM sqs_messages').get() as { n: number }).n;
    try {
      persistence.insertQueue({
        name: 'q',
        url: 'http://127.0.0.1:1/000000000000/q',
        arn: 'arn:aws:sqs:us-east-1:000000000000:q',
        attributes: {},
        tags: new Map(),
        createdTimestamp: 0,
        lastModifiedTimestamp: 0,
        sequenceCounter: 0,
      });
      const commits = commitPerAnswer(persistence.db, persistence as never);
      const message = (index: number) => ({
        messageId: `m${index}`,
        body: 'b',
        md5OfBody: '',
        messageAttributes: {},
        md5OfMessageAttributes: '',
        sentTimestamp: 0,
        approximateReceiveCount: 0,
      });
      for (let index = 0; index < MESSAGES; index++) persistence.insertMessage('q', message(index));
      expect(count()).toBe(0);
      commits.commit();
      expect(count()).toBe(MESSAGES);

      persistence.insertMessage('q', message(MESSAGES));
      expect(count()).toBe(MESSAGES);
      await new Promise((resolve) => setImmediate(resolve));
      expect(count()).toBe(MESSAGES + 1);
    } finally {
      reader.close();
      persistence.close();
      rmSync(otherDir, { recursive: true, force: true });
    }
  });
});
