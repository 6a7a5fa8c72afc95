import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { TopicSubscriber, type Received } from '@adhoc-scheduler/quickstart/client-topics';
import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { commandLine, LOCATION_OPTIONS, onePositional } from './arguments.js';
import { AdminError, AdminUsageError } from './errors.js';
import { iso, type Output } from './format.js';
import { locationOf, messagingAccess } from './location.js';
import { USAGE } from './usage.js';

/** The temporary queues' names: a deployed operator's policy can allow these alone. */
export const TAIL_QUEUE_PREFIX = 'adhoc-scheduler-tail-';

/** `arn:<partition>:sns:<region>:<account>:<name>`, as SNS names a topic. */
const TOPIC_ARN = /^arn:[a-z-]+:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/;

/** One message as `tail` prints it: its arrival and attributes on a line, its body under them. */
function messageText(message: Received): string {
  const attributes = Object.entries(message.attributes)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => `${name}=${value}`);
  return [`${iso(message.receivedAt)}  ${attributes.join('  ') || '(no attributes)'}`, `  ${message.body}`].join('\n');
}

function messageJson(message: Received): string {
  return JSON.stringify({ receivedAt: iso(message.receivedAt), attributes: message.attributes, body: message.body });
}

/** Resolves on the first Ctrl-C or SIGTERM, which it takes over from Node's default (exit at once) while it waits. */
function interrupted(): Promise<string> {
  const stop = new AbortController();
  return Promise.race([
    once(process, 'SIGINT', { signal: stop.signal }).then(() => 'SIGINT'),
    once(process, 'SIGTERM', { signal: stop.signal }).then(() => 'SIGTERM'),
  ]).finally(() => stop.abort());
}

export async function tailTopic(args: string[], output: Output): Promise<number> {
  const command = 'tail';
  const line = commandLine(
    command,
    args,
    { json: { type: 'boolean', default: false }, ...LOCATION_OPTIONS },
    { usage: USAGE.tail, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  const topicArn = onePositional(positionals, 'the topic ARN', command);
  if (!TOPIC_ARN.test(topicArn)) throw new AdminUsageError(`"${topicArn}" is not an SNS topic ARN`, command);
  const { client } = await messagingAccess(locationOf(values, command));
  const clients = { sns: new SNSClient(client), sqs: new SQSClient(client) };
  const queueName = `${TAIL_QUEUE_PREFIX}${randomUUID()}`;
  // Listening before subscribing: a Ctrl-C while it subscribes still cleans up.
  const stopped = interrupted();
  try {
    let subscriber: TopicSubscriber;
    try {
      subscriber = await TopicSubscriber.subscribe(clients, topicArn, queueName, (message) =>
        output.out(values.json ? messageJson(message) : messageText(message)),
      );
    } catch (error) {
      throw new AdminError(`cannot watch ${topicArn}: ${describeError(error)}`);
    }
    output.err(`Watching ${topicArn} through queue ${queueName}. Stop with Ctrl-C.`);
    await stopped;
    try {
      await subscriber.stop({ remove: 'queue' });
    } catch (error) {
      throw new AdminError(`could not remove the subscription or queue ${queueName}: ${describeError(error)}; remove them by hand`);
    }
    output.err(`Unsubscribed; queue ${queueName} deleted.`);
    return 0;
  } finally {
    clients.sns.destroy();
    clients.sqs.destroy();
  }
}
