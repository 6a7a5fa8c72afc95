import { Readable } from 'node:stream';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { PublishCommand, SNSClient, SNSServiceException } from '@aws-sdk/client-sns';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AwsClients } from '@adhoc-scheduler/functions';
import { describe, expect, it } from 'vitest';
import {
  countFaults,
  injectFaults,
  randomFaults,
  readFaultLog,
  type FaultDecision,
  type FaultKind,
  type InjectedFault,
} from '../src/chaos/faults.js';
import { seededRandom } from '../src/chaos/random.js';

/** Answers every request with `status` and `body`, and counts the requests that reached it. */
function fakeService(status: number, body: string, headers: Record<string, string> = {}) {
  const service = {
    requests: 0,
    handle: async () => {
      service.requests += 1;
      return { response: { statusCode: status, headers, body: Readable.from([Buffer.from(body)]) } };
    },
  };
  return service;
}

const access = {
  region: 'us-east-1',
  endpoint: 'http://127.0.0.1:9',
  credentials: { accessKeyId: 'k', secretAccessKey: 's' },
  maxAttempts: 3,
};
const PUBLISHED = '<PublishResponse><PublishResult><MessageId>m1</MessageId></PublishResult></PublishResponse>';
const EVENT_ID = `c-${'ab'.repeat(20)}`;

function clientsWith(
  sns: ReturnType<typeof fakeService>,
  sqs: ReturnType<typeof fakeService>,
  dynamodb: ReturnType<typeof fakeService>,
): AwsClients {
  return {
    sns: new SNSClient({ ...access, requestHandler: sns }),
    sqs: new SQSClient({ ...access, requestHandler: sqs }),
    dynamodb: DynamoDBDocumentClient.from(new DynamoDBClient({ ...access, requestHandler: dynamodb })),
  };
}

function injecting(clients: AwsClients, decide: FaultDecision): InjectedFault[] {
  const faults: InjectedFault[] = [];
  injectFaults(clients, { decide, idPrefix: 'f1.', idPattern: /c-[0-9a-f]{40}/, onFault: (fault) => faults.push(fault) });
  return faults;
}

const always =
  (kind: FaultKind): FaultDecision =>
  () =>
    kind;

describe('injectFaults', () => {
  it('refuses a call before it is sent, with the error the SDK raises for a 503, and its retries never send it', async () => {
    const sns = fakeService(200, PUBLISHED, { 'content-type': 'text/xml' });
    const clients = clientsWith(sns, fakeService(200, '{}'), fakeService(200, '{}'));
    const faults = injecting(clients, always('refused'));

    const error = await clients.sns
      .send(new PublishCommand({ TopicArn: 'arn:aws:sns:us-east-1:000000000000:t', Message: EVENT_ID }))
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SNSServiceException);
    expect(error).toMatchObject({ name: 'ServiceUnavailable', $fault: 'server', message: expect.stringContaining('injected fault f1.1') });
    expect(sns.requests).toBe(0);
    expect(faults).toEqual([
      { id: 'f1.1', at: expect.any(Number), service: 'sns', operation: 'Publish', kind: 'refused', ids: [EVENT_ID] },
    ]);
  });

  it('loses the answer of a call that took effect: exactly one request, then a timeout for the caller', async () => {
    const sqs = fakeService(200, JSON.stringify({ Successful: [], Failed: [] }), { 'content-type': 'application/x-amz-json-1.0' });
    const dynamodb = fakeService(200, '{}', { 'content-type': 'application/x-amz-json-1.0' });
    const clients = clientsWith(fakeService(200, PUBLISHED), sqs, dynamodb);
    const faults = injecting(clients, always('lost'));

    const sent = await clients.sqs
      .send(
        new SendMessageBatchCommand({
          QueueUrl: 'http://127.0.0.1:9/000000000000/q',
          Entries: [{ Id: 'e0', MessageBody: JSON.stringify({ id: EVENT_ID }) }],
        }),
      )
      .catch((e: unknown) => e);
    const updated = await clients.dynamodb
      .send(
        new UpdateCommand({
          TableName: 't',
          Key: { id: EVENT_ID },
          UpdateExpression: 'SET a = :a',
          ExpressionAttributeValues: { ':a': 1 },
        }),
      )
      .catch((e: unknown) => e);

    expect(sent).toMatchObject({
      name: 'TimeoutError',
      message: expect.stringContaining('injected fault f1.1: the answer to SendMessageBatch was lost'),
    });
    expect(updated).toMatchObject({ name: 'TimeoutError', message: expect.stringContaining('injected fault f1.2') });
    expect(sqs.requests).toBe(1);
    expect(dynamodb.requests).toBe(1);
    expect(faults.map(({ service, operation, kind, ids }) => ({ service, operation, kind, ids }))).toEqual([
      { service: 'sqs', operation: 'SendMessageBatch', kind: 'lost', ids: [EVENT_ID] },
      { service: 'dynamodb', operation: 'UpdateItem', kind: 'lost', ids: [EVENT_ID] },
    ]);
  });

  it('leaves a call that fails on its own with its own error, and records no fault', async () => {
    const dynamodb = fakeService(
      400,
      JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', message: 'no' }),
      {
        'content-type': 'application/x-amz-json-1.0',
      },
    );
    const clients = clientsWith(fakeService(200, PUBLISHED), fakeService(200, '{}'), dynamodb);
    const faults = injecting(clients, always('lost'));

    const error = await clients.dynamodb
      .send(
        new UpdateCommand({
          TableName: 't',
          Key: { id: EVENT_ID },
          UpdateExpression: 'SET a = :a',
          ExpressionAttributeValues: { ':a': 1 },
        }),
      )
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(DynamoDBServiceException);
    expect(error).toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(faults).toEqual([]);
  });

  it('lets every call through when the decision is no fault', async () => {
    const sns = fakeService(200, PUBLISHED, { 'content-type': 'text/xml' });
    const clients = clientsWith(sns, fakeService(200, '{}'), fakeService(200, '{}'));
    const faults = injecting(clients, () => undefined);

    const { MessageId } = await clients.sns.send(new PublishCommand({ TopicArn: 'arn:aws:sns:us-east-1:000000000000:t', Message: 'm' }));

    expect(MessageId).toBe('m1');
    expect(sns.requests).toBe(1);
    expect(faults).toEqual([]);
  });
});

describe('randomFaults', () => {
  it('faults calls at the probability asked for, half of them refused and half lost', () => {
    const decide = randomFaults(0.03, seededRandom(7));
    const decisions = Array.from({ length: 20_000 }, () => decide({ service: 'sqs', operation: 'ReceiveMessage' }));
    const refused = decisions.filter((kind) => kind === 'refused').length;
    const lost = decisions.filter((kind) => kind === 'lost').length;

    expect((refused + lost) / decisions.length).toBeGreaterThan(0.025);
    expect((refused + lost) / decisions.length).toBeLessThan(0.035);
    expect(refused / (refused + lost)).toBeGreaterThan(0.4);
    expect(refused / (refused + lost)).toBeLessThan(0.6);
  });

  it('never faults at probability 0', () => {
    const decide = randomFaults(0, seededRandom(1));
    expect(Array.from({ length: 1000 }, () => decide({ service: 'sns', operation: 'Publish' })).every((kind) => kind === undefined)).toBe(
      true,
    );
  });
});

describe('the fault log', () => {
  it('counts faults by service, operation and kind, skipping a line cut short by a kill', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'faults-'));
    try {
      const fault = (id: string, service: InjectedFault['service'], operation: string, kind: FaultKind): InjectedFault => ({
        id,
        at: 1,
        service,
        operation,
        kind,
        ids: [],
      });
      const lines = [
        fault('f1.1', 'sqs', 'ReceiveMessage', 'lost'),
        fault('f1.2', 'sqs', 'ReceiveMessage', 'refused'),
        fault('f2.1', 'sns', 'PublishBatch', 'lost'),
      ].map((f) => JSON.stringify(f));
      await writeFile(join(dir, 'faults.jsonl'), `${lines.join('\n')}\n{"id":"f2.2","at":`);

      const { faults, unreadableLines } = await readFaultLog(join(dir, 'faults.jsonl'));

      expect(unreadableLines).toBe(1);
      expect(countFaults(faults)).toEqual({
        sqs: { ReceiveMessage: { refused: 1, lost: 1 } },
        sns: { PublishBatch: { refused: 0, lost: 1 } },
      });
      expect(await readFaultLog(join(dir, 'none.jsonl'))).toEqual({ faults: [], unreadableLines: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
