import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { PublishCommand } from '@aws-sdk/client-sns';
import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { answers, LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service-access';
import { clientsFor, createSchedulerTarget, TopicSubscriber, type Received } from './client-topics.js';
import { DEMO_TIMINGS, startDemoService, type DemoService } from './demo-service.js';
import { deployedScheduler, localScheduler, type DeployedLocation, type SchedulerEndpoint } from './scheduler-endpoint.js';

const USAGE = `Schedules three events and shows what arrives: one due in a few seconds, one beyond the
near-path window (stored, then moved by the loader), and one invalid (reported on the failure topic).

Local service (default):
  scripts/quickstart [--outputs FILE]
    uses the local service of .local/outputs.json when it answers (scripts/start writes the file
    once the service is ready and removes it when it stops); with no service running, starts a
    demo service of its own for the run (in memory, near-path window ${DEMO_TIMINGS.nearPathWindowSeconds} s, loader every ${DEMO_TIMINGS.loaderIntervalSeconds} s)
    and stops it at the end. With --outputs, that service must be running.
Deployed stack:
  scripts/quickstart --stack-outputs cdk-outputs.json [--region R] [--profile P]
  scripts/quickstart --input-topic-arn ARN --emitter-role-arn ARN [--region R] [--profile P]

Options:
  --near-seconds N   when the first event is due (default 5)
  --far-seconds N    when the second is due (default: the near-path window plus 15 s, so
                     615 s on a service with the default 600-second window)
  --keep             keep the topics and queues it creates (a demo service's go with it)

Exit codes: 0 when all three outcomes arrived, 1 otherwise (the one line on stderr says why).`;

/** How long past the far event's due time the quickstart waits for what is missing. */
const GRACE_SECONDS = 60;

const read = (path: string): Promise<string> => readFile(path, 'utf8');

function seconds(flag: string, text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0)
    throw new Error(`${flag} takes a number of seconds above 0, not "${text}"`);
  return value;
}

/** A deployed stack, or the local service of an outputs file. */
type Where = DeployedLocation & { readonly outputs?: string | undefined };

/** Where to publish: a deployed stack, the local service if it answers, or a demo service of the quickstart's own. */
async function findScheduler(where: Where): Promise<{ readonly scheduler: SchedulerEndpoint; readonly demo: DemoService | undefined }> {
  const deployed = await deployedScheduler(where, read);
  if (deployed !== undefined) {
    console.log(`Using the deployed scheduler in ${deployed.region} (input topic ${deployed.inputTopicArn}).`);
    return { scheduler: deployed, demo: undefined };
  }
  const path = where.outputs ?? LOCAL_SERVICE_FILES.outputs;
  const local = await localScheduler(path, read);
  if (local !== undefined && (await answers(local.endpoint))) {
    console.log(`Using the local service at ${local.endpoint} (${path}).`);
    return { scheduler: local, demo: undefined };
  }
  const why =
    local === undefined
      ? `no local service is running (${path} does not exist)`
      : `nothing answers at ${local.endpoint}, the endpoint in ${path} (a service stopped with kill -9 leaves its file behind)`;
  if (where.outputs !== undefined) throw new Error(`${why}: start it with scripts/start, or leave out --outputs for a demo service`);
  console.log(`As ${why}, starting a demo service for this run (in memory; stopped at the end)...`);
  const demo = await startDemoService();
  try {
    const scheduler = await localScheduler(demo.outputsFile, read);
    if (scheduler === undefined) throw new Error('the demo service wrote no outputs');
    console.log(
      `Demo service at ${scheduler.endpoint}: near-path window ${scheduler.nearPathWindowSeconds} s, loader every ${DEMO_TIMINGS.loaderIntervalSeconds} s.`,
    );
    return { scheduler, demo };
  } catch (error) {
    await demo.stop();
    throw error;
  }
}

type Outcome = 'arrived' | 'timed out' | 'interrupted' | 'receive failed';

/** The wait for the three outcomes: all arrived, the time ran out, a receive failed, or the user pressed Ctrl-C. */
function waitForOutcomes(pending: Set<string>, timeoutMs: number) {
  let done: (outcome: Outcome) => void = () => {};
  const outcome = new Promise<Outcome>((resolve) => (done = resolve));
  const timer = setTimeout(() => done('timed out'), timeoutMs);
  const interrupt = (): void => done('interrupted');
  process.once('SIGINT', interrupt);
  void outcome.finally(() => {
    clearTimeout(timer);
    process.off('SIGINT', interrupt);
  });
  return {
    outcome,
    settle(name: string): void {
      pending.delete(name);
      if (pending.size === 0) done('arrived');
    },
    fail(): void {
      done('receive failed');
    },
  };
}

function parseCommandLine(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: {
        outputs: { type: 'string' },
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
  } catch (error) {
    throw new Error(`${(error as Error).message} (scripts/quickstart --help lists the options)`);
  }
}

async function run(argv: readonly string[]): Promise<number> {
  const { values } = parseCommandLine(argv);
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const nearSeconds = seconds('--near-seconds', values['near-seconds']);
  const farOption = values['far-seconds'] === undefined ? undefined : seconds('--far-seconds', values['far-seconds']);
  // The SDK's default credential chain reads the profile from the environment.
  if (values.profile) process.env.AWS_PROFILE = values.profile;

  const { scheduler, demo } = await findScheduler(values);
  const subscribers: TopicSubscriber[] = [];
  try {
    const clients = clientsFor({ region: scheduler.region, endpoint: scheduler.endpoint, credentials: scheduler.credentials });
    const farSeconds = farOption ?? scheduler.nearPathWindowSeconds + 15;

    const suffix = randomBytes(3).toString('hex');
    console.log(
      `Creating topics quickstart-output-${suffix} and quickstart-failures-${suffix} (publishable by ${scheduler.emitterRoleArn})`,
    );
    const outputTopic = await createSchedulerTarget(clients.sns, `quickstart-output-${suffix}`, scheduler.emitterRoleArn);
    const failureTopic = await createSchedulerTarget(clients.sns, `quickstart-failures-${suffix}`, scheduler.emitterRoleArn);

    const pending = new Set(['near', 'far', 'invalid']);
    const timeoutMs = (farSeconds + GRACE_SECONDS) * 1000;
    const wait = waitForOutcomes(pending, timeoutMs);
    let receiveFailure: unknown;
    const onReceiveError = (error: unknown): void => {
      receiveFailure ??= error;
      wait.fail();
    };
    const onArrival = (message: Received): void => {
      const scheduledAt = Date.parse(message.attributes['scheduler-scheduled-at'] ?? '');
      const lateness = message.receivedAt - scheduledAt;
      console.log(
        `arrived   ${message.body.padEnd(6)} scheduled ${new Date(scheduledAt).toISOString()}  lateness at arrival ${lateness >= 0 ? '+' : ''}${lateness} ms`,
      );
      wait.settle(message.body);
    };
    const onFailure = (message: Received): void => {
      const notice = JSON.parse(message.body) as { reason: string; message: string; event: { payload?: string } };
      console.log(`failure   ${notice.reason}: ${notice.message}`);
      console.log(`          ${message.body}`);
      if (notice.event.payload === 'invalid') wait.settle('invalid');
    };
    subscribers.push(
      await TopicSubscriber.subscribe(clients, outputTopic, `quickstart-output-${suffix}`, onArrival, { onError: onReceiveError }),
      await TopicSubscriber.subscribe(clients, failureTopic, `quickstart-failures-${suffix}`, onFailure, { onError: onReceiveError }),
    );

    const now = Date.now();
    const events = [
      {
        date: new Date(now + nearSeconds * 1000).toISOString(),
        target: outputTopic,
        user: 'quickstart',
        payload: 'near',
        failure_topic: failureTopic,
      },
      {
        date: new Date(now + farSeconds * 1000).toISOString(),
        target: outputTopic,
        user: 'quickstart',
        payload: 'far',
        failure_topic: failureTopic,
      },
      { date: 'next tuesday', target: outputTopic, user: 'quickstart', payload: 'invalid', failure_topic: failureTopic },
    ];
    for (const event of events) {
      await clients.sns.send(new PublishCommand({ TopicArn: scheduler.inputTopicArn, Message: JSON.stringify(event) }));
      console.log(`scheduled ${event.payload.padEnd(6)} for ${event.date}`);
    }
    const minutes =
      farSeconds >= 120
        ? ` (${Math.round(farSeconds / 60)} minutes: the service's near-path window is ${scheduler.nearPathWindowSeconds} s)`
        : '';
    console.log(`Waiting for the events: the far one is due in ${farSeconds} s${minutes}...`);

    const outcome = await wait.outcome;
    if (outcome === 'receive failed') throw new Error(`could not read the quickstart's queues: ${describeError(receiveFailure)}`);
    if (outcome === 'interrupted') throw new Error(`interrupted; missing: ${[...pending].join(', ')}`);
    if (outcome === 'timed out')
      throw new Error(`not everything arrived within ${timeoutMs / 1000} s; missing: ${[...pending].join(', ')}`);
    console.log('All three outcomes arrived.');
    return 0;
  } finally {
    // A service that stopped meanwhile cannot delete them; what failed is said above.
    await Promise.allSettled(subscribers.map((subscriber) => subscriber.stop({ remove: values.keep ? undefined : 'topic' })));
    await demo?.stop();
  }
}

// A reader that stops reading (`| head`) ends the run, without a trace; a demo service stops with this process.
process.stdout.on('error', () => process.exit(1));
// Every failure is one line on stderr and exit code 1; exit explicitly, as idle SDK sockets must not hold the process open.
run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`quickstart: ${describeError(error)}\n`);
    process.exit(1);
  },
);
