import { CreateQueueCommand, GetQueueAttributesCommand, type Message, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Emulators } from '../../src/local/emulators.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { uniqueName } from './kit.js';

/** Queues of their own on fauxqs for the pollers' tests, and a client that counts what the poller asks of them. */

/** An SQS client on fauxqs that counts the requests it makes, by command, and the most receives it had in flight at once. */
export function countingSqs(emulators: Emulators): {
  readonly sqs: SQSClient;
  readonly calls: Map<string, number>;
  readonly received: () => number;
  readonly receivesInFlight: () => { readonly now: number; readonly most: number };
} {
  const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.messagingEndpoint });
  const calls = new Map<string, number>();
  let received = 0;
  const receives = { now: 0, most: 0 };
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? '';
      const receiving = command === 'ReceiveMessageCommand';
      if (receiving) receives.most = Math.max(receives.most, ++receives.now);
      try {
        const result = await next(args);
        calls.set(command, (calls.get(command) ?? 0) + 1);
        if (receiving) received += ((result.output as { Messages?: Message[] }).Messages ?? []).length;
        return result;
      } finally {
        if (receiving) receives.now -= 1;
      }
    },
    { step: 'initialize', name: 'countRequests' },
  );
  return { sqs, calls, received: () => received, receivesInFlight: () => ({ ...receives }) };
}

export async function createQueue(
  sqs: SQSClient,
  visibilityTimeoutSeconds: number,
  label = 'queue',
): Promise<{ url: string; arn: string }> {
  const { QueueUrl: url } = await sqs.send(
    new CreateQueueCommand({ QueueName: uniqueName(label), Attributes: { VisibilityTimeout: String(visibilityTimeoutSeconds) } }),
  );
  if (!url) throw new Error('no queue URL');
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return { url, arn: Attributes?.QueueArn ?? '' };
}

/** Sends messages in this order; `group` undefined sends one without a MessageGroupId. */
export async function send(
  sqs: SQSClient,
  queueUrl: string,
  messages: readonly { readonly body: string; readonly group: string | undefined }[],
): Promise<void> {
  for (let from = 0; from < messages.length; from += 10) {
    const { Failed = [] } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.slice(from, from + 10).map((message, index) => ({
          Id: `m${index}`,
          MessageBody: message.body,
          ...(message.group === undefined ? {} : { MessageGroupId: message.group }),
        })),
      }),
    );
    if (Failed.length > 0) throw new Error(`send failed: ${JSON.stringify(Failed)}`);
  }
}

export async function queueIsEmpty(sqs: SQSClient, queueUrl: string): Promise<boolean> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Attributes.ApproximateNumberOfMessages === '0' && Attributes.ApproximateNumberOfMessagesNotVisible === '0';
}
