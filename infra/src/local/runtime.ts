import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { SQSClient } from '@aws-sdk/client-sqs';
import {
  applyRegistry,
  CachedTenantDirectory,
  createLogger,
  DynamoDbTenantRegistry,
  ENV,
  loadConfig,
  systemClock,
  TransientError,
  parseTenantsDocument,
  type Clock,
  type EmissionEnding,
  type EndJournal,
  type SchedulerConfig,
  type SchedulerTopics,
  type ServiceLogger,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import {
  bindHandler,
  createAwsClients,
  createDependencies,
  handlers,
  type AwsClients,
  type FunctionName,
} from '@adhoc-scheduler/functions';
import { LOCAL_CREDENTIALS } from '@adhoc-scheduler/shared/local-service-access';
import { EVENT_SOURCES, LOCAL_VISIBILITY_TIMEOUT_SECONDS, type EventSourceName } from '../queues.js';
import { DEFAULT_WARM_UP_MS, warmUpWhenNothingWaits } from './dynamodb-warm-up.js';
import { startEmulators, type EmulatorPorts, type Emulators } from './emulators.js';
import { FileEndJournal, ProcessEndJournal } from './end-journal.js';
import { createLocalResources, resourceNames, type LocalResources } from './resources.js';
import { refusePublishesToSchedulerTopics } from './scheduler-topic-guard.js';
import { startFairQueuePoller } from './fair-queue-poller.js';
import type { SqsPoller, SqsPollerOptions } from './sqs-event-source.js';
import { startSqsPoller } from './sqs-poller.js';
import { readTenantsFile, TenantsFileSync } from './tenants-file.js';

/** The emulators' keys (see shared's local-service-access.ts), with the region and account below: how anything reaches the local service. */
export { LOCAL_CREDENTIALS };
export const LOCAL_REGION = 'us-east-1';
/**
 * Delay-queue batches (up to 100 events each) held at once: enough for 10,000 events due in
 * the same second to wait for it together, while the ends of the batches before are still
 * being written. Lambda scales an event source to hundreds of invocations the same way.
 */
const DEFAULT_EMITTER_CONCURRENCY = 128;
/**
 * Publishes the local emitter may have answered and not yet recorded, when its state is on disk
 * (see emitterMaxUnrecordedEnds): what a kill -9 can publish again. In memory there is none: the
 * emulators die with the service, and nothing it published is there to be published again.
 */
const LOCAL_EMITTER_MAX_UNRECORDED_ENDS = 100;
/**
 * How long the local emitter keeps an answered end for others (see emitterEndsLingerMs): DynamoDB
 * Local commits one transaction at a time, whatever its size, and every other write and read of
 * the service waits behind it. About what an emitter batch spans (its 1 s batching window), so a
 * steady load costs a write or two a second instead of one per publish call.
 */
const LOCAL_EMITTER_ENDS_LINGER_MS = 500;
/** The emitter's journal of ends published and not yet recorded, in the data directory (see FileEndJournal). */
const END_JOURNAL_FILE = 'emitter-ends.jsonl';
/**
 * Ingest batches handled at once, per ingest queue. Each poller gathers one batch at a time (see
 * startSqsPoller), receiving several batches of 10 at once while the queue has a backlog, and
 * hands it to one of these. The public tenant's queue and the registered tenants' have four
 * each: a flood on the shared topic takes the public pollers only, as the stack caps that event
 * source's concurrency.
 */
const INGEST_CONCURRENCY = 4;
export const LOADING_CONCURRENCY = 8;
/** Pages of jobs worked at once: a bulk cancel's page cancels on its tenant's counter, and a job's pages follow one another, so few at a time. */
const CHANGES_CONCURRENCY = 2;
/** The emulators' one account: every local topic and queue lives in it. */
export const LOCAL_ACCOUNT = '000000000000';
export const LOCAL_EMITTER_ROLE_ARN = `arn:aws:iam::${LOCAL_ACCOUNT}:role/adhoc-scheduler-emitter`;

export interface LocalSchedulerOptions {
  /** Persistent state (both emulators); in-memory when absent. */
  readonly dataDir?: string;
  /** Emulators to share (e.g. one set per test file); started and stopped here when absent. */
  readonly emulators?: Emulators;
  /** Ports for the emulators started here (not for shared ones); the system picks them when absent. */
  readonly ports?: EmulatorPorts;
  /** Resource name prefix; unique by default so schedulers sharing emulators never collide. */
  readonly namePrefix?: string;
  /**
   * Registered tenants: a file the service re-reads when it changes (the operator's registry,
   * see `scripts/admin tenant add`), or a fixed registry. None by default: only the public tenant.
   */
  readonly tenants?: { readonly file: string } | TenantsDocument;
  /** SCHEDULER_* settings (see shared/src/config.ts), e.g. a shorter near-path window for demos. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Delay-queue batches held at once: the emitter's concurrency. Each batch is held until its
   * events are due (up to about a second), so a busy second needs many; Lambda scales the same way.
   */
  readonly emitterConcurrency?: number;
  /**
   * Whether the emitter keeps the ends it published and has not yet recorded in a journal (see
   * EndWriter): by default a file in the data directory on disk, and the process itself when its
   * emulators are its own and in memory; none on emulators it shares, which outlive it.
   */
  readonly journalEnds?: boolean;
  /**
   * Visibility timeout of the scheduler's queues (LOCAL_VISIBILITY_TIMEOUT_SECONDS by default):
   * how long a failed batch waits before its retry, and what a killed service held before it
   * comes back. The pollers extend it while a handler works.
   */
  readonly visibilityTimeoutSeconds?: number;
  /**
   * Longest a poller keeps a batch's messages hidden for its handler, as Lambda's function
   * timeout: after that they come back within the visibility timeout, as from a handler that
   * timed out (Lambda's longest, 900 s, by default; a test may give a short one).
   */
  readonly handlerTimeoutSeconds?: number;
  /**
   * How long DynamoDB Local is worked before anything polls, when no queue holds a message (see
   * dynamodb-warm-up.ts): DEFAULT_WARM_UP_MS when the runtime starts the emulators, none on shared ones.
   */
  readonly dynamodbWarmUpMs?: number;
  readonly logger?: ServiceLogger;
  /** Lets a caller wrap the service's SDK clients (fault injection, request counting). */
  readonly instrumentClients?: (clients: AwsClients) => void;
  /** The functions' clock; the system's by default (a test may give one whose timers fire early). */
  readonly clock?: Clock;
  readonly onInvocation?: (invocation: { readonly fn: FunctionName; readonly durationMs: number; readonly records: number }) => void;
}

export interface LocalOutputs {
  readonly region: string;
  /** SNS and SQS endpoint. */
  readonly endpoint: string;
  readonly dynamodbEndpoint: string;
  /** The shared input topic: the public tenant's. */
  readonly inputTopicArn: string;
  /** Each registered tenant's input topic, by tenant id. */
  readonly tenantInputTopicArns: Readonly<Record<string, string>>;
  readonly emitterRoleArn: string;
  readonly tableName: string;
  readonly delayQueueUrl: string;
  readonly loadingQueueUrl: string;
  /** Pages of the jobs that change events in bulk: `scripts/admin events cancel` and `tenant resume` start one there. */
  readonly changesQueueUrl: string;
  /** Where the shared topic delivers: the public tenant's requests, polled apart. */
  readonly publicIngestQueueUrl: string;
  /** Where every registered tenant's topic delivers (and where `scripts/admin tenant add` subscribes a new one). */
  readonly ingestQueueUrl: string;
  /** Where every queue sets aside what keeps failing. */
  readonly deadLetterQueueUrl: string;
  /** Events due later than this many seconds ahead go through the store and the loader. */
  readonly nearPathWindowSeconds: number;
  /** SCHEDULER_SHARD_COUNT: how many shards of the tenant index a listing reads. */
  readonly shardCount: number;
  /** SCHEDULER_INDEX_QUEUED_EVENTS: whether a listing without a label finds open near-path events. */
  readonly indexQueuedEvents: boolean;
}

export interface LocalScheduler {
  readonly outputs: LocalOutputs;
  readonly config: SchedulerConfig;
  readonly clients: AwsClients;
  /** Runs one loader tick now (the timer runs them too). */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

function outputsOf(emulators: Emulators, resources: LocalResources, config: SchedulerConfig): LocalOutputs {
  return {
    region: LOCAL_REGION,
    endpoint: emulators.messagingEndpoint,
    dynamodbEndpoint: emulators.dynamodbEndpoint,
    inputTopicArn: resources.inputTopicArn,
    tenantInputTopicArns: resources.tenantTopicArns,
    emitterRoleArn: LOCAL_EMITTER_ROLE_ARN,
    tableName: resources.tableName,
    delayQueueUrl: resources.delayQueue.url,
    loadingQueueUrl: resources.loadingQueue.url,
    changesQueueUrl: resources.changesQueue.url,
    publicIngestQueueUrl: resources.publicIngestQueue.url,
    ingestQueueUrl: resources.ingestQueue.url,
    deadLetterQueueUrl: resources.deadLetterQueue.url,
    nearPathWindowSeconds: config.nearPathWindowSeconds,
    shardCount: config.shardCount,
    indexQueuedEvents: config.indexQueuedEvents,
  };
}

/**
 * The service's settings: the local defaults, then the caller's environment, then what the
 * emulators fix (region, account, names). The endpoints and the queues' URLs are known once the
 * emulators and the queues are there.
 */
function localSettings(options: LocalSchedulerOptions, prefix: string): SchedulerConfig {
  return loadConfig({
    // DynamoDB Local commits a transaction at once, a batch item by item: see BatchWriteMode.
    [ENV.dynamodbBatchWrites]: 'transactions',
    // One process holds every emitter batch, and DynamoDB Local records ends slower than a spike
    // publishes: a bound on what a kill -9 publishes again (see emitterMaxUnrecordedEnds), where
    // the state outlives the process (on disk, or on emulators it does not own).
    [ENV.emitterMaxUnrecordedEnds]: String(
      options.dataDir !== undefined || options.emulators !== undefined ? LOCAL_EMITTER_MAX_UNRECORDED_ENDS : 0,
    ),
    [ENV.emitterEndsLingerMs]: String(LOCAL_EMITTER_ENDS_LINGER_MS),
    ...options.env,
    [ENV.region]: LOCAL_REGION,
    // Every local topic, the service's own included, lives in the emulators' one account.
    [ENV.accountId]: LOCAL_ACCOUNT,
    [ENV.messagingEndpoint]: undefined,
    [ENV.dynamodbEndpoint]: undefined,
    [ENV.tableName]: resourceNames(prefix).table,
    [ENV.delayQueueUrl]: 'created below',
    [ENV.loadingQueueUrl]: 'created below',
    [ENV.changesQueueUrl]: 'created below',
    [ENV.topicPrefix]: prefix,
  });
}

type FunctionDependencies = Parameters<(typeof handlers)['loader']>[0];

interface PollerWiring {
  readonly sqs: SQSClient;
  readonly visibilityTimeoutSeconds: number;
  readonly depsFor: (fn: FunctionName) => FunctionDependencies;
  readonly emitterDeps: FunctionDependencies;
  readonly handlerTimeoutSeconds: number | undefined;
  readonly onInvocation: LocalSchedulerOptions['onInvocation'];
}

/** One poller per queue, each with its function's handler bound to its dependencies, as Lambda's event sources. */
function startPollers(resources: LocalResources, emitterConcurrency: number, wiring: PollerWiring): SqsPoller[] {
  const poll = (
    fn: 'ingest' | 'loading' | 'emitter' | 'changes',
    queue: { url: string; arn: string },
    concurrency: number,
    start: (pollerOptions: SqsPollerOptions) => SqsPoller = startSqsPoller,
    deps = wiring.depsFor(fn),
  ): SqsPoller => {
    return start({
      sqs: wiring.sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      region: LOCAL_REGION,
      concurrency,
      visibilityTimeoutSeconds: wiring.visibilityTimeoutSeconds,
      handlerTimeoutSeconds: wiring.handlerTimeoutSeconds,
      ...EVENT_SOURCES[fn satisfies EventSourceName],
      handler: bindHandler(handlers[fn], deps),
      logger: deps.logger,
      onInvocation: (durationMs, records) => wiring.onInvocation?.({ fn, durationMs, records }),
    });
  };
  return [
    // The same handler on two queues: a flood of public requests waits in its own, apart from the registered tenants'.
    poll('ingest', resources.publicIngestQueue, INGEST_CONCURRENCY),
    poll('ingest', resources.ingestQueue, INGEST_CONCURRENCY),
    poll('loading', resources.loadingQueue, LOADING_CONCURRENCY),
    poll('changes', resources.changesQueue, CHANGES_CONCURRENCY),
    // The delay queue is a fair queue (MessageGroupId = tenant), on AWS and on fauxqs as patched: one tenant's spike does not hold back the others.
    poll('emitter', resources.delayQueue, emitterConcurrency, startFairQueuePoller, wiring.emitterDeps),
  ];
}

/** The loader on a timer, as its EventBridge rule invokes it: like one target with no overlap, a tick still running absorbs the next. */
function startLoaderTimer(
  deps: FunctionDependencies,
  intervalSeconds: number,
  onInvocation: LocalSchedulerOptions['onInvocation'],
): { tick(): Promise<void>; stop(): void; running(): Promise<void> | undefined } {
  let running: Promise<void> | undefined;
  const tick = (): Promise<void> => {
    running ??= (async () => {
      const started = performance.now();
      try {
        await handlers.loader(deps);
      } catch (error) {
        deps.logger.error({ err: error }, 'loader tick failed; the next tick catches up');
      } finally {
        onInvocation?.({ fn: 'loader', durationMs: performance.now() - started, records: 0 });
        running = undefined;
      }
    })();
    return running;
  };
  const timer = setInterval(() => void tick(), intervalSeconds * 1000);
  void tick();
  return { tick, stop: () => clearInterval(timer), running: () => running };
}

/**
 * The emitter's journal of ends, with what the process before left in it. On disk, the ends it
 * has published are kept beside the emulators' data until recorded: a kill then publishes again
 * only what was not yet in it (see EndWriter). Emulators of its own in memory die with it: the
 * process is as durable as they are. Emulators it shares outlive it: none.
 */
async function openEndJournal(
  options: Pick<LocalSchedulerOptions, 'journalEnds' | 'dataDir' | 'emulators'>,
): Promise<{ readonly journal: EndJournal & { close(): Promise<void> }; readonly left: readonly EmissionEnding[] } | undefined> {
  if (options.journalEnds === false) return undefined;
  if (options.dataDir !== undefined) return FileEndJournal.open(join(options.dataDir, END_JOURNAL_FILE));
  return options.emulators === undefined ? { journal: new ProcessEndJournal(), left: [] } : undefined;
}

/** How often, and how far apart, the start tries to write the registry to the table. */
const REGISTRY_START_ATTEMPTS = 20;
const REGISTRY_START_PAUSE_MS = 500;

/**
 * The registry as data in the table, written from the tenants option at the start, and the cache
 * the functions read it through; a file is applied to the table again as it changes.
 */
async function startRegistry(
  config: SchedulerConfig,
  clients: AwsClients,
  tenants: TenantsDocument,
  options: {
    readonly file: string | undefined;
    readonly scope: { readonly region: string; readonly schedulerTopics: SchedulerTopics };
    readonly clock: Clock;
    readonly logger: ServiceLogger;
  },
): Promise<{ readonly tenantDirectory: CachedTenantDirectory; readonly fileSync: TenantsFileSync | undefined }> {
  const table = new DynamoDbTenantRegistry(clients.dynamodb, config.tableName, systemClock);
  const { file, scope, clock, logger } = options;
  // A table that fails a call for a moment does not stop the start: the registry is written again.
  for (let attempt = 1; ; attempt++) {
    try {
      await table.listEveryEntry();
      await applyRegistry(table, tenants);
      break;
    } catch (error) {
      if (!(error instanceof TransientError) || attempt === REGISTRY_START_ATTEMPTS) throw error;
      logger.warn({ err: error, attempt }, 'the registry could not be written to the table; trying again');
      await clock.sleep(REGISTRY_START_PAUSE_MS);
    }
  }
  return {
    fileSync: file === undefined ? undefined : new TenantsFileSync(file, scope, table, logger, tenants),
    tenantDirectory: new CachedTenantDirectory(table, {
      topicPrefix: config.topicPrefix,
      maxAgeMs: config.registryMaxAgeMs,
      clock,
      logger: logger.child({ fn: 'registry' }),
    }),
  };
}

/**
 * The scheduler on one machine: real emulators, the resources the CDK app creates, and the
 * same handlers driven as Lambda drives them (SQS pollers honouring batchItemFailures, a
 * timer for the loader).
 */
export async function startLocalScheduler(options: LocalSchedulerOptions = {}): Promise<LocalScheduler> {
  const prefix = options.namePrefix ?? `scheduler-${randomBytes(4).toString('hex')}`;
  // Checked before anything starts, as the tenants below: a bad setting or an invalid file stops the start at once.
  const settings = localSettings(options, prefix);
  const registryScope = { region: LOCAL_REGION, schedulerTopics: settings };
  const tenantsOption = options.tenants ?? {};
  const tenants =
    'file' in tenantsOption ? readTenantsFile(tenantsOption.file, registryScope) : parseTenantsDocument(tenantsOption, registryScope);
  const ownEmulators = options.emulators === undefined;
  const emulators = options.emulators ?? (await startEmulators({ dataDir: options.dataDir, ports: options.ports }));
  const logger = options.logger ?? createLogger(process.env.LOG_LEVEL ?? 'info');
  try {
    const emitterConcurrency = options.emitterConcurrency ?? DEFAULT_EMITTER_CONCURRENCY;
    const visibilityTimeoutSeconds = options.visibilityTimeoutSeconds ?? LOCAL_VISIBILITY_TIMEOUT_SECONDS;
    const resources = await createLocalResources(
      { messaging: emulators.messagingEndpoint, dynamodb: emulators.dynamodbEndpoint },
      { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS },
      prefix,
      {
        visibilityTimeoutSeconds,
        emitMaxAgeSeconds: settings.emitMaxAgeSeconds,
        tenantIds: (tenants.tenants ?? []).map(({ id }) => id),
        logger,
      },
    );
    const config: SchedulerConfig = {
      ...settings,
      messagingEndpoint: emulators.messagingEndpoint,
      dynamodbEndpoint: emulators.dynamodbEndpoint,
      delayQueueUrl: resources.delayQueue.url,
      loadingQueueUrl: resources.loadingQueue.url,
      changesQueueUrl: resources.changesQueue.url,
    };
    const clients = createAwsClients(config, { credentials: LOCAL_CREDENTIALS, maxSockets: 4 * emitterConcurrency });
    refusePublishesToSchedulerTopics(clients.sns, config, LOCAL_EMITTER_ROLE_ARN);
    const warmUpMs = options.dynamodbWarmUpMs ?? (ownEmulators ? DEFAULT_WARM_UP_MS : 0);
    await warmUpWhenNothingWaits(warmUpMs, clients, resources, logger);
    options.instrumentClients?.(clients);
    const { tenantDirectory, fileSync } = await startRegistry(config, clients, tenants, {
      file: 'file' in tenantsOption ? tenantsOption.file : undefined,
      scope: registryScope,
      clock: options.clock ?? systemClock,
      logger,
    });
    // Each function's dependencies made, and bound to its handler, as its Lambda entry point does (see lambdaHandler).
    const endJournal = await openEndJournal(options);
    const depsFor = (fn: FunctionName) =>
      createDependencies(fn, config, clients, {
        logger: logger.child({ fn }),
        clock: options.clock,
        tenants: tenantDirectory,
        ...(fn === 'emitter' && endJournal ? { endJournal: endJournal.journal } : {}),
      });

    const emitterDeps = depsFor('emitter');
    // What the process before published and left unrecorded in the journal is recorded before
    // anything polls: a redelivered copy of such an event must find it ended, not publish it again.
    await emitterDeps.endWriter.replay(endJournal?.left ?? []);
    const pollers = startPollers(resources, emitterConcurrency, {
      sqs: clients.sqs,
      visibilityTimeoutSeconds,
      depsFor,
      emitterDeps,
      handlerTimeoutSeconds: options.handlerTimeoutSeconds,
      onInvocation: options.onInvocation,
    });

    const loader = startLoaderTimer(depsFor('loader'), config.loaderIntervalSeconds, options.onInvocation);

    return {
      outputs: outputsOf(emulators, resources, config),
      config,
      clients,
      tick: loader.tick,
      async stop() {
        loader.stop();
        await fileSync?.close();
        await Promise.all(pollers.map((poller) => poller.stop()));
        await loader.running();
        await emitterDeps.endWriter.close();
        await endJournal?.journal.close();
        clients.sns.destroy();
        clients.sqs.destroy();
        clients.dynamodb.destroy();
        if (ownEmulators) await emulators.stop();
      },
    };
  } catch (error) {
    if (ownEmulators) await emulators.stop();
    throw error;
  }
}
