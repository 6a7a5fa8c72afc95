// Schedules one event with the AWS SDK: creates a topic the scheduler may publish to, then
// publishes a schedule request to the scheduler's input topic. `pnpm --silent example:publish`
// runs it against the local service (scripts/start), whose settings are in .local/outputs.json.
import { existsSync, readFileSync } from 'node:fs';
import { CreateTopicCommand, PublishCommand, SetTopicAttributesCommand, SNSClient } from '@aws-sdk/client-sns';

const OUTPUTS = '.local/outputs.json';
if (!existsSync(OUTPUTS)) {
  console.error(`${OUTPUTS} not found: start the local service first (scripts/start)`);
  process.exit(1);
}
const local = JSON.parse(readFileSync(OUTPUTS, 'utf8')) as {
  region: string;
  endpoint: string;
  inputTopicArn: string;
  emitterRoleArn: string;
};
// A service stopped with kill -9 leaves the file behind: something must answer at its endpoint.
const running = await fetch(local.endpoint, { signal: AbortSignal.timeout(3_000) }).then(
  () => true,
  () => false,
);
if (!running) {
  console.error(`nothing answers at ${local.endpoint}, the endpoint in ${OUTPUTS}: start the local service first (scripts/start)`);
  process.exit(1);
}
// On AWS: new SNSClient({ region }) with your own credentials, and the stack's InputTopicArn and EmitterRoleArn outputs.
const sns = new SNSClient({
  region: local.region,
  endpoint: local.endpoint,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

// The target: a topic whose policy lets the scheduler's emitter role publish.
const { TopicArn: target } = await sns.send(new CreateTopicCommand({ Name: 'invoice-reminders' }));
const policy = {
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: { AWS: local.emitterRoleArn }, Action: 'sns:Publish', Resource: target }],
};
await sns.send(new SetTopicAttributesCommand({ TopicArn: target, AttributeName: 'Policy', AttributeValue: JSON.stringify(policy) }));

const date = new Date(Date.now() + 10_000).toISOString();
const { MessageId } = await sns.send(
  new PublishCommand({
    TopicArn: local.inputTopicArn,
    Message: JSON.stringify({ date, target, user: 'billing-service', payload: JSON.stringify({ invoice: 42 }) }),
  }),
);
// Without an "id" in the request, the event id is "m-" and the MessageId of the publish.
console.log(`Scheduled for ${date} to ${target}: see it with scripts/admin event show m-${MessageId}`);
