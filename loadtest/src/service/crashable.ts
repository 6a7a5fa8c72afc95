import { rm } from 'node:fs/promises';
import { takenPorts, type EmulatorPorts } from '@adhoc-scheduler/infra';
import type { AwsService, ServiceFaults } from '../chaos/faults.js';
import type { Restart } from '../chaos/kills.js';
import { pollUntil } from '../poll.js';
import { startChildService, type ChildService } from './child.js';
import type { SchedulerService } from './connection.js';
import type { LocalServiceOptions } from './local-options.js';

/** How long the emulators of a killed service may take to exit (they notice their parent is gone). */
const EMULATOR_EXIT_TIMEOUT_MS = 60_000;
const START_ATTEMPTS = 3;

/** The local service in a child process that the harness may kill -9 and start again. */
export interface CrashableService extends SchedulerService {
  /**
   * kill -9 of the service process (its emulators exit with it), then a start on the same data
   * directory, ports and resource names: clients keep their endpoints, queue URLs and topics.
   */
  killAndRestart(): Promise<Restart>;
  /** Requests the service's clients made, by AWS service, over all its lives (less what each life did in the moment before its kill). */
  requests(): Promise<Record<AwsService, number>>;
  /** Where every life of the service appends the faults it injected. */
  readonly faultLog: string;
}

function portOf(endpoint: string): number {
  return Number(new URL(endpoint).port);
}

function requestsIn(report: Awaited<ReturnType<SchedulerService['report']>>): Record<AwsService, number> {
  const usage = report?.usage;
  return {
    sns: (usage?.sns.publishes ?? 0) + (usage?.sns.publishBatches ?? 0),
    sqs: usage?.sqs.requests ?? 0,
    dynamodb: usage?.dynamodb.requests ?? 0,
  };
}

/**
 * Starts the service in a child process on a data directory and system-picked ports, then
 * keeps those ports and names for every restart. Each life injects faults with its own number
 * and random sequence. Usage counters start again with each life, so `report` gives none: a
 * run across restarts reports requests (`requests`), not costs.
 */
export async function startCrashableService(
  options: Omit<LocalServiceOptions, 'dataDir' | 'namePrefix' | 'ports' | 'faults'> & {
    readonly dataDir: string;
    /** The data directory is the run's own: removed when the service stops. */
    readonly removeDataDirOnStop: boolean;
    readonly namePrefix: string;
    readonly faults: Omit<ServiceFaults, 'life'>;
  },
): Promise<CrashableService> {
  const { removeDataDirOnStop, ...serviceOptions } = options;
  let life = 1;
  let current: ChildService = await startChildService({ ...serviceOptions, faults: { ...options.faults, life } });
  const first = current.local;
  if (!first) throw new Error('the local service reported no outputs');
  const ports: EmulatorPorts = { messaging: portOf(first.outputs.endpoint), dynamodb: portOf(first.outputs.dynamodbEndpoint) };
  const earlierLives: Record<AwsService, number> = { sns: 0, sqs: 0, dynamodb: 0 };

  const addLife = (counted: Record<AwsService, number>): void => {
    for (const service of Object.keys(earlierLives) as AwsService[]) earlierLives[service] += counted[service];
  };

  const emulatorsGone = async (): Promise<void> => {
    const gone = await pollUntil(async () => (await takenPorts(ports)).length === 0, Date.now() + EMULATOR_EXIT_TIMEOUT_MS);
    if (!gone)
      throw new Error(
        `the emulators of the killed service still hold ports ${ports.messaging} and ${ports.dynamodb} after ${EMULATOR_EXIT_TIMEOUT_MS / 1000} s`,
      );
  };

  const startAgain = async (): Promise<ChildService> => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await startChildService({ ...serviceOptions, ports, faults: { ...options.faults, life } });
      } catch (error) {
        // Something took a port between the check and the bind; wait for it again.
        if (attempt >= START_ATTEMPTS || !String(error).includes('already in use')) throw error;
        await emulatorsGone();
      }
    }
  };

  return {
    mode: 'child',
    access: current.access,
    inputTopicArn: current.inputTopicArn,
    emitterRoleArn: current.emitterRoleArn,
    local: first,
    report: async () => undefined,
    faultLog: options.faults.logFile,
    async killAndRestart() {
      addLife(requestsIn(await current.report(false)));
      const killedAt = Date.now();
      await current.kill();
      await emulatorsGone();
      const emulatorsGoneAt = Date.now();
      life += 1;
      current = await startAgain();
      const outputs = current.local?.outputs;
      if (outputs?.endpoint !== first.outputs.endpoint || outputs.delayQueueUrl !== first.outputs.delayQueueUrl) {
        throw new Error(`the restarted service has other endpoints or resources (${outputs?.endpoint}, ${outputs?.delayQueueUrl})`);
      }
      return { killedAt, emulatorsGoneAt, readyAt: Date.now() };
    },
    async requests() {
      const now = requestsIn(await current.report(false));
      return { sns: earlierLives.sns + now.sns, sqs: earlierLives.sqs + now.sqs, dynamodb: earlierLives.dynamodb + now.dynamodb };
    },
    async stop() {
      await current.stop();
      if (removeDataDirOnStop) await rm(options.dataDir, { recursive: true, force: true });
    },
  };
}
