import { PRICES } from '../cost/prices.js';

/**
 * The limits an event's path meets, by where the scheduler runs: AWS's published quotas, or the
 * emulators' rates as the load test measured them on the project's 2-core machine. Each number
 * says where it comes from. Every limit a row of docs/operators/capacity.md names is here once.
 */

/** A number and where it comes from. */
export interface Sourced {
  readonly value: number;
  readonly source: string;
}

export interface Limits {
  readonly name: LimitsName;
  /** Messages a second SNS publishes for the account in the region (Publish and PublishBatch entries alike). */
  readonly snsPublishPerSecond: Sourced;
  /** Messages one standard queue may hold received and not yet deleted. */
  readonly sqsInFlightPerQueue: Sourced;
  /** Lambda's concurrent executions for the account in the region. */
  readonly lambdaAccountConcurrency: Sourced;
  /** Concurrent batches an SQS event source starts with, and adds each minute while a backlog lasts, and its most. */
  readonly eventSourceStart: Sourced;
  readonly eventSourceRampPerMinute: Sourced;
  readonly eventSourceMax: Sourced;
  /** Write and read units a second one DynamoDB partition (one key of the table or of an index) takes. */
  readonly partitionWritesPerSecond: Sourced;
  readonly partitionReadsPerSecond: Sourced;
  /** Write units a second a new on-demand table takes at once, before it has seen more (its warm throughput). */
  readonly newTableWritesPerSecond: Sourced;
  /** The most write units a second one on-demand table takes (an account quota). */
  readonly tableWritesPerSecond: Sourced;
  /** Resources in one CloudFormation stack, and outputs: each tenant in the CDK app's configuration adds a topic, its policy, a subscription and an output. */
  readonly stackResources: Sourced;
  readonly stackOutputs: Sourced;
  /** SNS topics in the account and region: each registered tenant has its input topic. */
  readonly snsTopicsPerAccount: Sourced;
  /**
   * Local profiles only: the one measured rate that stands where AWS's quotas and Lambda's
   * concurrency stand, for the emitter (SNS fan-out through fauxqs, events a second) and for
   * loading (events a second through the local service's loading batches). Undefined on AWS.
   */
  readonly localEmitPerSecond?: Sourced;
  readonly localMovePerSecond?: Sourced;
}

export type LimitsName = 'aws' | 'local-memory' | 'local-disk';
export const LIMITS_NAMES: readonly LimitsName[] = ['aws', 'local-memory', 'local-disk'];

const SNS_QUOTAS = 'https://docs.aws.amazon.com/general/latest/gr/sns.html';
const SQS_QUOTAS = 'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-queues.html';
const LAMBDA_QUOTAS = 'https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html';
const SQS_SCALING = 'https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html';
const DYNAMODB_QUOTAS = 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html';
const DYNAMODB_WARM = 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html';
const CLOUDFORMATION_QUOTAS = 'https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html';

const AWS: Limits = {
  name: 'aws',
  snsPublishPerSecond: {
    value: 30_000,
    source: `${SNS_QUOTAS} (Publish, standard topics, us-east-1; 9,000 in us-west-2 and eu-west-1, less elsewhere; adjustable; each PublishBatch entry counts)`,
  },
  sqsInFlightPerQueue: { value: 120_000, source: `${SQS_QUOTAS} (messages per queue in flight, standard; raised by a support request)` },
  lambdaAccountConcurrency: { value: 1_000, source: `${LAMBDA_QUOTAS} (concurrent executions; adjustable to tens of thousands)` },
  eventSourceStart: { value: 5, source: `${SQS_SCALING} (five concurrent batches when messages are available)` },
  eventSourceRampPerMinute: { value: 300, source: `${SQS_SCALING} (up to 300 more instances a minute)` },
  eventSourceMax: { value: 1_000, source: `${SQS_SCALING} (at most 1,000 batches at once per event source mapping)` },
  partitionWritesPerSecond: { value: 1_000, source: `${DYNAMODB_WARM} (1,000 write units a second per partition; not adjustable)` },
  partitionReadsPerSecond: { value: 3_000, source: `${DYNAMODB_WARM} (3,000 read units a second per partition; not adjustable)` },
  newTableWritesPerSecond: {
    value: 4_000,
    source: `${DYNAMODB_WARM} (a new on-demand table sustains 4,000 writes and 12,000 reads a second; raised by setting its warm throughput)`,
  },
  tableWritesPerSecond: { value: 40_000, source: `${DYNAMODB_QUOTAS} (per table, on demand: 40,000 write request units; adjustable)` },
  stackResources: { value: 500, source: `${CLOUDFORMATION_QUOTAS} (resources per stack)` },
  stackOutputs: { value: 200, source: `${CLOUDFORMATION_QUOTAS} (outputs per stack)` },
  snsTopicsPerAccount: { value: 100_000, source: `${SNS_QUOTAS} (topics per account, standard; adjustable)` },
};

/**
 * fauxqs's SNS fan-out, measured alone (BENCHMARKS.md, Findings, Hotspot): 10,000 events by
 * PublishBatch to a topic with one subscribed queue, one consumer receiving, took 3.9 to 4.2 s
 * from the first publish to the last receive.
 */
const FAUXQS_FAN_OUT_PER_SECOND = 10_000 / 4.05;
/**
 * What the local service's end writes take of the two cores while a spike is published: DynamoDB
 * Local took 0.57 of them over the hotspot run (BENCHMARKS.md, Findings, Hotspot). fauxqs gets
 * the rest, so its fan-out runs at that share of its rate alone. Measured in the run the check
 * compares with: the check tests the arithmetic with this share, not the share itself.
 */
const CORES = 2;
const END_WRITES_CORES = 0.57;
const LOCAL_EMIT: Sourced = {
  value: (FAUXQS_FAN_OUT_PER_SECOND * (CORES - END_WRITES_CORES)) / CORES,
  source:
    'BENCHMARKS.md, Findings, Hotspot: fauxqs fans out 10,000 events in 3.9 to 4.2 s alone; DynamoDB Local takes 0.57 of the 2 cores recording the ends',
};

/**
 * Milliseconds of a function's invocations per event, from what a run's cost table says they
 * cost: BENCHMARKS.md, Cost per million events, "Lambda <function> duration" (results.json:
 * usage.lambda.<function>.billedDurationMs over the events delivered), at the function's memory.
 */
export function lambdaMsPerEvent(dollarsPerMillionEvents: number, memoryMb: number): number {
  const gbSecondsPerEvent = dollarsPerMillionEvents / PRICES.lambda.perGbSecondArm64 / 1e6;
  return (gbSecondsPerEvent / (memoryMb / 1024)) * 1000;
}

/** The local service runs 8 loading batches at once (infra/src/local/runtime.ts, LOADING_CONCURRENCY). */
function localMove(dollarsPerMillionEvents: number, loadingBatches: number, memoryMb: number, row: string): Sourced {
  return {
    value: (loadingBatches * 1000) / lambdaMsPerEvent(dollarsPerMillionEvents, memoryMb),
    source: `BENCHMARKS.md, Cost per million events, Lambda loading duration, ${row}; ${loadingBatches} loading batches at once`,
  };
}

/** Limits AWS sets that do not exist locally: nothing binds there but the emulators. */
const UNBOUNDED: Sourced = { value: Number.POSITIVE_INFINITY, source: 'not a limit on the local service' };

function local(name: 'local-memory' | 'local-disk', move: Sourced): Limits {
  return {
    name,
    snsPublishPerSecond: UNBOUNDED,
    sqsInFlightPerQueue: UNBOUNDED,
    lambdaAccountConcurrency: UNBOUNDED,
    eventSourceStart: UNBOUNDED,
    eventSourceRampPerMinute: UNBOUNDED,
    eventSourceMax: UNBOUNDED,
    partitionWritesPerSecond: UNBOUNDED,
    partitionReadsPerSecond: UNBOUNDED,
    newTableWritesPerSecond: UNBOUNDED,
    tableWritesPerSecond: UNBOUNDED,
    stackResources: UNBOUNDED,
    stackOutputs: UNBOUNDED,
    snsTopicsPerAccount: UNBOUNDED,
    localEmitPerSecond: LOCAL_EMIT,
    localMovePerSecond: move,
  };
}

/** The limits of each place the scheduler runs, by the name `--limits` takes. */
export function limitsFor(name: LimitsName, localLoadingBatches: number, loadingMemoryMb: number): Limits {
  if (name === 'aws') return AWS;
  return name === 'local-memory'
    ? local(name, localMove(0.016, localLoadingBatches, loadingMemoryMb, 'far, memory ($0.016)'))
    : local(name, localMove(0.02, localLoadingBatches, loadingMemoryMb, 'far, disk ($0.020)'));
}
