import { parseArgs } from 'node:util';
import { LOCAL_CREDENTIALS, LOCAL_EMITTER_ROLE_ARN, LOCAL_REGION, startEmulators } from '@adhoc-scheduler/infra';
import { emissionAttributes, SnsTopicPublisher } from '@adhoc-scheduler/shared';
import { createConsumerEndpoint, startConsumer } from './consumer.js';
import { LoadTestUsageError } from './options.js';
import { pollUntil } from './poll.js';
import { harnessClients } from './service/connection.js';
import { summarize } from './stages.js';

export const FLOOR_USAGE = `Usage: loadtest floor [--events N] [--consumers N] [--data-dir DIR]

The floor of a spike: what the emulator alone takes to carry N events from a topic to the
consumer's queue, with nothing of the scheduler in between. The events are published at once by
the emitter's own SNS publisher, with the attributes a delivery carries, to a topic that a queue
takes with raw delivery; the consumer is the load test's own, with as many long polls. Each
event's time is its receive minus the first publish: the lateness the spike would have if the
scheduler cost nothing. Compare a spike's p99 with this one's, measured in the same session.

  --events N      events published at once                         [30,000]
  --consumers N   concurrent long polls on the consumer queue      [8]
  --data-dir DIR  keep the emulator's state on disk (default: in memory)`;

export interface FloorOptions {
  readonly events: number;
  readonly consumers: number;
  readonly dataDir: string | undefined;
}

export interface FloorResult {
  readonly events: number;
  readonly received: number;
  /** From the first publish to the last publish's answer. */
  readonly publishMs: number;
  /** Receive minus first publish, per event. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export function parseFloorCli(args: readonly string[]): FloorOptions | undefined {
  const { values } = parseArgs({
    args: [...args],
    options: {
      events: { type: 'string', default: '30000' },
      consumers: { type: 'string', default: '8' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  const count = (name: 'events' | 'consumers', text: string, max: number): number => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1 || value > max)
      throw new LoadTestUsageError(`--${name} must be an integer from 1 to ${max}, got "${text}"`);
    return value;
  };
  return {
    events: count('events', values.events, 1_000_000),
    consumers: count('consumers', values.consumers, 64),
    dataDir: values['data-dir'],
  };
}

export async function runFloor(options: FloorOptions): Promise<FloorResult> {
  const emulators = await startEmulators({ dataDir: options.dataDir });
  const clients = harnessClients({
    region: LOCAL_REGION,
    endpoint: emulators.messagingEndpoint,
    dynamodbEndpoint: undefined,
    credentials: LOCAL_CREDENTIALS,
    profile: undefined,
  });
  try {
    const endpoint = await createConsumerEndpoint(clients.sns, clients.sqs, `floor-${Date.now()}`, LOCAL_EMITTER_ROLE_ARN);
    const receivedAt: number[] = [];
    const consumer = startConsumer(clients.sqs, endpoint.queueUrl, options.consumers, (_message, at) => receivedAt.push(at));
    const publisher = new SnsTopicPublisher(clients.sns);
    const startedAt = Date.now();
    await Promise.all(
      Array.from({ length: options.events }, (_, index) => {
        const event = { id: `floor-${index}`, dueAt: startedAt, user: 'floor', tenant: 'public', labels: undefined };
        return publisher.publish(endpoint.topicArn, '{"floor":true}', emissionAttributes(event, Date.now()));
      }),
    );
    const publishMs = Date.now() - startedAt;
    await pollUntil(() => receivedAt.length >= options.events, Date.now() + 600_000);
    await consumer.stop();
    const { p50, p99, max } = summarize(receivedAt.map((at) => at - startedAt));
    return { events: options.events, received: receivedAt.length, publishMs, p50Ms: p50, p99Ms: p99, maxMs: max };
  } finally {
    clients.destroy();
    await emulators.stop();
  }
}

export function floorSummary(options: FloorOptions, result: FloorResult): string {
  return [
    `floor: ${result.events.toLocaleString('en-US')} events from a topic to the consumer, the emulator alone (${options.dataDir ? 'on disk' : 'in memory'}, ${options.consumers} long polls)`,
    `  received ${result.received.toLocaleString('en-US')}; all published in ${result.publishMs} ms`,
    `  receive after the first publish, ms: p50 ${result.p50Ms}  p99 ${result.p99Ms}  max ${result.maxMs}`,
  ].join('\n');
}
