import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { PublishCommand } from '@aws-sdk/client-sns';
import { clientsFor, createSchedulerTarget, TopicSubscriber, type ClientAccess, type Received } from './client-topics.js';
import { resolveScheduler, type SchedulerEndpoint } from './scheduler-endpoint.js';

const USAGE = `Schedules three events and shows what arrives: one due in a few seconds, one beyond the
near-path window (stored, then moved by the loader), and one invalid (reported on the failure topic).

Local service (default): reads .local/outputs.json written by scripts/start.
  pnpm quickstart [--outputs FILE]
Deployed stack:
  pnpm quickstart --stack-outputs cdk-outputs.json [--region R] [--profile P]
  pnpm quickstart --input-topic-arn ARN --emitter-role-arn ARN [--region R] [--profile P]

Options:
  --near-seconds N   when the first event is due (default 5)
  --far-seconds N    when the second is due (default: the near-path window plus 15 s)
  --keep             keep the topics and queues it creates`;

const { values } = parseArgs({
  options: {
    outputs: { type: 'string', default: '.local/outputs.json' },
    'stack-outputs': { type: 'string' },
    'input-topic-arn': { type: 'string' },
    'emitter-role-arn': { type: 'string' },
    region: { type: 'string' },
    profile: { type: 'string' },
    'near-seconds': { type: 'string', default: '5' },
    'far-seconds': { type: 'string' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
// The SDK's default credential chain reads the profile from the environment.
if (values.profile) process.env.AWS_PROFILE = values.profile;

const scheduler: SchedulerEndpoint = await resolveScheduler(values, (path) => readFile(path, 'utf8'));
const access: ClientAccess = { region: scheduler.region, endpoint: scheduler.endpoint, credentials: scheduler.credentials };
const clients = clientsFor(access);
const nearSeconds = Number(values['near-seconds']);
const farSeconds = values['far-seconds'] ? Number(values['far-seconds']) : scheduler.nearPathWindowSeconds + 15;

const suffix = randomBytes(3).toString('hex');
console.log(`Creating topics quickstart-output-${suffix} and quickstart-failures-${suffix} (publishable by ${scheduler.emitterRoleArn})`);
const outputTopic = await createSchedulerTarget(clients.sns, `quickstart-output-${suffix}`, scheduler.emitterRoleArn);
const failureTopic = await createSchedulerTarget(clients.sns, `quickstart-failures-${suffix}`, scheduler.emitterRoleArn);

const pending = new Set(['near', 'far', 'invalid']);
let done: () => void = () => {};
const allArrived = new Promise<void>((resolve) => (done = resolve));
const settle = (name: string): void => {
  pending.delete(name);
  if (pending.size === 0) done();
};

const onArrival = (message: Received): void => {
  const scheduledAt = Date.parse(message.attributes['scheduler-scheduled-at'] ?? '');
  const lateness = message.receivedAt - scheduledAt;
  console.log(`arrived   ${message.body.padEnd(6)} scheduled ${new Date(scheduledAt).toISOString()}  lateness ${lateness >= 0 ? '+' : ''}${lateness} ms`);
  settle(message.body);
};
const onFailure = (message: Received): void => {
  const notice = JSON.parse(message.body) as { reason: string; message: string; event: { payload?: string } };
  console.log(`failure   ${notice.reason}: ${notice.message}`);
  console.log(`          ${message.body}`);
  if (notice.event.payload === 'invalid') settle('invalid');
};
const subscribers = [
  await TopicSubscriber.subscribe(clients, outputTopic, `quickstart-output-${suffix}`, onArrival),
  await TopicSubscriber.subscribe(clients, failureTopic, `quickstart-failures-${suffix}`, onFailure),
];

const now = Date.now();
const events = [
  { date: new Date(now + nearSeconds * 1000).toISOString(), target: outputTopic, user: 'quickstart', payload: 'near', failure_topic: failureTopic },
  { date: new Date(now + farSeconds * 1000).toISOString(), target: outputTopic, user: 'quickstart', payload: 'far', failure_topic: failureTopic },
  { date: 'next tuesday', target: outputTopic, user: 'quickstart', payload: 'invalid', failure_topic: failureTopic },
];
for (const event of events) {
  await clients.sns.send(new PublishCommand({ TopicArn: scheduler.inputTopicArn, Message: JSON.stringify(event) }));
  console.log(`scheduled ${event.payload.padEnd(6)} for ${event.date}`);
}
console.log(`Waiting for the events (the far one is due in ${farSeconds} s)...`);

const timeoutMs = (farSeconds + 60) * 1000;
const timedOut = await Promise.race([
  allArrived.then(() => false),
  new Promise<boolean>((resolve) => setTimeout(() => resolve(true), timeoutMs).unref()),
]);
await Promise.all(subscribers.map((subscriber) => subscriber.stop({ remove: !values.keep })));
if (timedOut) {
  console.error(`Not everything arrived within ${timeoutMs / 1000} s; missing: ${[...pending].join(', ')}`);
  process.exit(1);
}
console.log('All three outcomes arrived.');
process.exit(0);
