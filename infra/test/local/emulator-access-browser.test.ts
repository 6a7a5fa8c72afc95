import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateTopicCommand, DeleteTopicCommand, PublishCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { sharedEmulators, uniqueName } from './kit.js';

/**
 * Another site open in the operator's browser tries the emulators directly, around the console:
 * a form posted to fauxqs (no preflight), fetches with and without CORS to both. Nothing it sends
 * changes anything, and it reads nothing (emulator-access.ts).
 */

/** Debian's Chromium (scripts/bootstrap.sh installs it), as in console.test.ts. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SECRET = 'a payload only the scheduler may read';
/** An attacker's name that its DNS now answers with 127.0.0.1 (DNS rebinding), played by the browser's resolver. */
const REBOUND_NAME = 'rebound.test';
const AUTHORIZATION = `AWS4-HMAC-SHA256 Credential=local/20261127/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=${'0'.repeat(64)}`;

const emulators = sharedEmulators();
let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      // Root (as in CI) needs --no-sandbox; the browser loads only the tests' own pages.
      '--no-sandbox',
      `--host-resolver-rules=MAP ${REBOUND_NAME} 127.0.0.1`,
      // Chromium's own guard against a public page reaching 127.0.0.1 would stop the rebound
      // page before the emulators see it; Firefox and Safari have none, so the test does without.
      '--disable-features=LocalNetworkAccessChecks',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
});

/** What the page got from one attempt: an error, or the answer as the page sees it. */
type Attempt = { readonly error: string } | { readonly type: string; readonly status: number; readonly body: string };

interface Target {
  readonly topicArn: string;
  readonly queueUrl: string;
  readonly tableName: string;
}

/**
 * The other site's page: posts a form that publishes a tenant's pause to the topic, then fetches,
 * and leaves in `window.attempts` what each gave it. The signed-looking fetches need a preflight.
 */
function attackPage(target: Target): string {
  const messaging = emulators.messagingEndpoint;
  const dynamodb = emulators.dynamodbEndpoint;
  const json = (amzTarget: string) => ({
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': amzTarget,
    authorization: AUTHORIZATION,
  });
  const attempts: Attempts = [
    [
      'publish a cancel by label, form-encoded, without CORS',
      `${messaging}/`,
      {
        method: 'POST',
        mode: 'no-cors',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ Action: 'Publish', TopicArn: target.topicArn, Message: '{"action":"cancel","label":"L"}' }).toString(),
      },
    ],
    [
      'list the topics, form-encoded',
      `${messaging}/`,
      { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'Action=ListTopics' },
    ],
    [
      'receive from the queue, signed',
      `${messaging}/`,
      { method: 'POST', headers: json('AmazonSQS.ReceiveMessage'), body: JSON.stringify({ QueueUrl: target.queueUrl }) },
    ],
    [
      'scan the table, signed',
      `${dynamodb}/`,
      { method: 'POST', headers: json('DynamoDB_20120810.Scan'), body: JSON.stringify({ TableName: target.tableName }) },
    ],
    [
      'put an item, signed',
      `${dynamodb}/`,
      {
        method: 'POST',
        headers: json('DynamoDB_20120810.PutItem'),
        body: JSON.stringify({ TableName: target.tableName, Item: { id: { S: 'from-the-page' } } }),
      },
    ],
    [
      'put an item, without CORS',
      `${dynamodb}/`,
      {
        method: 'POST',
        mode: 'no-cors',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ TableName: target.tableName, Item: { id: { S: 'from-the-page-no-cors' } } }),
      },
    ],
  ];
  return `<!doctype html><meta charset="utf-8"><title>another site</title>
<iframe name="sink"></iframe>
<form method="post" action="${messaging}/" target="sink">
  <input type="hidden" name="Action" value="Publish">
  <input type="hidden" name="TopicArn" value="${target.topicArn}">
  <input type="hidden" name="Message" value='{"action":"pause"}'>
</form>
<script>
${attemptsScript(
  attempts,
  `const sink = document.querySelector('iframe');
  const posted = new Promise((resolve) => sink.addEventListener('load', resolve, { once: true }));
  document.forms[0].submit();
  await posted;`,
)}
</script>`;
}

type Attempts = readonly (readonly [name: string, url: string, init: RequestInit])[];

/** Runs `first`, then the attempts, in a page, and leaves what each gave it in `window.attempts`. */
function attemptsScript(attempts: Attempts, first = ''): string {
  return `(async () => {
  ${first}
  const attempts = {};
  for (const [name, url, init] of ${JSON.stringify(attempts)}) {
    try {
      const response = await fetch(url, init);
      attempts[name] = { type: response.type, status: response.status, body: await response.text() };
    } catch (error) {
      attempts[name] = { error: String(error) };
    }
  }
  window.attempts = attempts;
})();`;
}

/** A tenant's input topic with a queue that records what reaches it, and a table holding a payload, made with the SDK. */
async function targets() {
  const access = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const sns = new SNSClient({ ...access, endpoint: emulators.messagingEndpoint });
  const sqs = new SQSClient({ ...access, endpoint: emulators.messagingEndpoint });
  const dynamodb = new DynamoDBClient({ ...access, endpoint: emulators.dynamodbEndpoint });
  const name = uniqueName('from-a-page');
  const { TopicArn: topicArn = '' } = await sns.send(new CreateTopicCommand({ Name: name }));
  const { QueueUrl: queueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  await sns.send(
    new SubscribeCommand({
      TopicArn: topicArn,
      Protocol: 'sqs',
      Endpoint: Attributes?.QueueArn,
      Attributes: { RawMessageDelivery: 'true' },
    }),
  );
  await dynamodb.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    }),
  );
  await dynamodb.send(new PutItemCommand({ TableName: name, Item: { id: { S: 'stored' }, payload: { S: SECRET } } }));
  const target: Target = { topicArn, queueUrl, tableName: name };
  return {
    target,
    /** Nothing reached the topic's queue, and none of these items was written; then the SDK's publish does reach it. */
    async expectUnchanged(itemIds: readonly string[]): Promise<void> {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      expect(Messages.map((message) => message.Body)).toEqual([]);
      for (const id of itemIds) {
        expect((await dynamodb.send(new GetItemCommand({ TableName: name, Key: { id: { S: id } } }))).Item).toBeUndefined();
      }
      // The silence above is the page's: what the SDK publishes arrives.
      await sns.send(new PublishCommand({ TopicArn: topicArn, Message: 'signed' }));
      const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 5 }));
      expect(received.Messages?.map((message) => message.Body)).toEqual(['signed']);
    },
    async remove(): Promise<void> {
      await sns.send(new DeleteTopicCommand({ TopicArn: topicArn }));
      await sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
      await dynamodb.send(new DeleteTableCommand({ TableName: name }));
      for (const client of [sns, sqs, dynamodb]) client.destroy();
    },
  };
}

/** What the page could see is an error, an opaque answer, or one of the emulators' refusals: never their data. */
function expectNothingRead(attempts: Record<string, Attempt>, count: number): void {
  expect(Object.keys(attempts)).toHaveLength(count);
  for (const [what, attempt] of Object.entries(attempts)) {
    if ('error' in attempt) continue;
    if (attempt.type === 'opaque') expect(attempt.body, what).toBe('');
    else expect({ status: attempt.status, body: attempt.body }, what).toEqual({ status: 403, body: expect.stringMatching(/^refused: /) });
  }
}

async function attemptsOf(page: Page): Promise<Record<string, Attempt>> {
  const handle = await page.waitForFunction(() => (globalThis as { attempts?: unknown }).attempts);
  return (await handle.jsonValue()) as Record<string, Attempt>;
}

describe('a page of another site in the operator’s browser', () => {
  it('changes nothing in fauxqs or DynamoDB Local, and reads nothing from them', async () => {
    const { target, expectUnchanged, remove } = await targets();
    // Served on localhost, another origin (and site) than the emulators' 127.0.0.1.
    const site: Server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(attackPage(target));
    });
    await new Promise<void>((listening) => site.listen(0, '127.0.0.1', listening));
    const page = await browser.newPage();
    try {
      await page.goto(`http://localhost:${(site.address() as AddressInfo).port}/`);
      expectNothingRead(await attemptsOf(page), 6);
      await expectUnchanged(['from-the-page', 'from-the-page-no-cors']);
    } finally {
      await page.close();
      site.close();
      await remove();
    }
  });

  /** What a page rebound to each emulator tries there, same-origin, so with any header it likes. */
  const json = (amzTarget: string) => ({
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': amzTarget,
    authorization: AUTHORIZATION,
  });
  const reboundAttempts: readonly (readonly [name: string, endpoint: () => string, attempts: (target: Target) => Attempts])[] = [
    [
      'fauxqs (SNS and SQS)',
      () => emulators.messagingEndpoint,
      (target) => [
        [
          'publish a pause, signed',
          '/',
          {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: AUTHORIZATION },
            body: new URLSearchParams({ Action: 'Publish', TopicArn: target.topicArn, Message: '{"action":"pause"}' }).toString(),
          },
        ],
        [
          'receive from the queue, signed',
          '/',
          { method: 'POST', headers: json('AmazonSQS.ReceiveMessage'), body: JSON.stringify({ QueueUrl: target.queueUrl }) },
        ],
      ],
    ],
    [
      'DynamoDB Local',
      () => emulators.dynamodbEndpoint,
      (target) => [
        [
          'scan the table, signed',
          '/',
          { method: 'POST', headers: json('DynamoDB_20120810.Scan'), body: JSON.stringify({ TableName: target.tableName }) },
        ],
        [
          'put an item, signed',
          '/',
          {
            method: 'POST',
            headers: json('DynamoDB_20120810.PutItem'),
            body: JSON.stringify({ TableName: target.tableName, Item: { id: { S: 'from-the-rebound-page' } } }),
          },
        ],
      ],
    ],
  ];

  it.each(reboundAttempts)(
    'changes and reads nothing in %s either from a name rebound to 127.0.0.1, where its requests are same-origin',
    async (_name, endpoint, attemptsOn) => {
      const { target, expectUnchanged, remove } = await targets();
      const attempts = attemptsOn(target);
      const page = await browser.newPage();
      try {
        // The attacker's server gave the page; its name now leads to the emulator's port.
        const origin = `http://${REBOUND_NAME}:${new URL(endpoint()).port}`;
        await page.route(`${origin}/page`, (route) =>
          route.fulfill({ contentType: 'text/html; charset=utf-8', body: `<script>${attemptsScript(attempts)}</script>` }),
        );
        await page.goto(`${origin}/page`);
        // Same-origin, so the page reads each answer: the emulator's refusal, and nothing else.
        const answers = await attemptsOf(page);
        expect(Object.keys(answers)).toEqual(attempts.map(([name]) => name));
        for (const [what, answer] of Object.entries(answers)) {
          expect(answer, what).toEqual({ type: 'basic', status: 403, body: expect.stringMatching(/^refused: /) });
        }
        await expectUnchanged(['from-the-rebound-page']);
      } finally {
        await page.close();
        await remove();
      }
    },
  );
});
