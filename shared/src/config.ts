import { SQS_MAX_DELAY_SECONDS } from './domain/limits.js';

/**
 * The one place settings are read. Every value has the AWS default; the local runtime and
 * tests override them through the same environment variables (or by passing an object).
 */

/**
 * How the store makes conditional writes of many items, each with its own condition and its own
 * outcome (adapters/dynamodb-conditional-writes.ts), in one of two ways that DynamoDB offers:
 *
 * - `statements`: PartiQL BatchExecuteStatement, 25 statements a request, each applied or
 *   refused on its own. One write unit per item: what the stack on AWS uses.
 * - `transactions`: TransactWriteItems, up to 100 items a request; a refused condition cancels
 *   the request, which is then made again without it. AWS bills two units per item, but
 *   DynamoDB Local commits a transaction at once where it commits each batched item on its own
 *   (with its own disk syncs): 3 to 6 times the items per second here, on disk above all. The
 *   local service uses it.
 */
export type BatchWriteMode = 'statements' | 'transactions';

export interface SchedulerConfig {
  /** AWS region of every client. */
  readonly region: string;
  /** Endpoint override for SNS and SQS (the local emulator); undefined on AWS. */
  readonly messagingEndpoint: string | undefined;
  /** Endpoint override for DynamoDB (the local emulator); undefined on AWS. */
  readonly dynamodbEndpoint: string | undefined;

  readonly tableName: string;
  readonly delayQueueUrl: string;
  readonly loadingQueueUrl: string;
  /** The `changes` queue: pages of the jobs that change events in bulk (a cancel by label, a tenant's resume). */
  readonly changesQueueUrl: string;
  /**
   * Names the input topics: `<prefix>-input` (the public tenant) and `<prefix>-tenant-<id>`.
   * Ingest knows a message's tenant by the topic it arrived on.
   */
  readonly topicPrefix: string;
  /**
   * How long a function may answer from what it read of the tenant registry, kept as data in the
   * table (CachedTenantDirectory): a change to the registry is in force everywhere this long
   * after it is written, at most.
   */
  readonly registryMaxAgeMs: number;
  /**
   * The scheduler's AWS account: its topics named `<topicPrefix>-...` there are its own, and no
   * request may name one. Undefined: such a name is the scheduler's in any account.
   */
  readonly accountId: string | undefined;
  /** Further topics of the scheduler's own, by ARN (an alarm topic named otherwise), that no request may name. */
  readonly ownTopicArns: readonly string[];
  /** How far ahead of its ingest an event may be due: one publisher's dates in year 9999 would hold its quota for ever. */
  readonly maxScheduleAheadSeconds: number;

  /** Events due sooner than this go straight to the delay queue; later ones are stored. */
  readonly nearPathWindowSeconds: number;
  /** How often the loader runs. */
  readonly loaderIntervalSeconds: number;
  /**
   * The loader moves events due before `now + lookahead`. It must stay below the near-path
   * window by at least one loader interval, so that an event stored just past the window is
   * always found by a later tick (the gap absorbs GSI propagation lag).
   */
  readonly loaderLookaheadSeconds: number;
  /** Work budget of one loader tick; what is left is picked up by the next tick. */
  readonly loaderTickBudgetSeconds: number;
  /** On a table with no loader cursor yet, how far back the first tick looks. */
  readonly loaderInitialCatchUpSeconds: number;
  /** Ids per message from the loader to the loading function. */
  readonly loadingChunkSize: number;

  /** Width of the loader's time buckets: a tick reads each tenant's stored shards a round of buckets at a time. */
  readonly bucketSeconds: number;
  /**
   * Shards per tenant in the tenant index (`<tenant>#s<n>`, and so on for each family): one busy
   * tenant is spread over several partitions, which the loader and a listing each read. Events stored under a shard it no longer counts are not found.
   */
  readonly shardCount: number;
  /**
   * Whether an event placed straight in the delay queue gets a tenant-index entry (`<tenant>#q<n>`),
   * so that a listing without a label finds it: on by default, one more write unit for each such
   * event (3 instead of 2). Off (the lean setting), an open near-path event is listed only under its
   * labels, and found by id; once it fails, is held or is carried into the table it is listed all
   * the same (see tenantIndexKeyAt).
   */
  readonly indexQueuedEvents: boolean;

  /**
   * How much earlier than due the emitter wants to receive an event. SQS delays are whole
   * seconds and its event source gathers a batch for up to a second (EVENT_SOURCES), so the
   * emitter receives early and waits the rest.
   */
  readonly emitterLeadMs: number;
  /**
   * Cancels and reschedules apply only to events due more than this ahead, as of when the change
   * is written. The emitter reads an event's record when its copy arrives, at most
   * `emitterLeadMs` + 1 s before it is due; a change written before the cutoff lands by then
   * (see changeWriteTimeoutMs), so the read is the last word.
   */
  readonly changeCutoffSeconds: number;
  /**
   * How long one attempt to write a cancel or reschedule may take: one that has not answered by
   * then is abandoned and made again, with the cutoff evaluated anew. It bounds when a change
   * checked against the cutoff can land, so the cutoff must cover it.
   */
  readonly changeWriteTimeoutMs: number;
  /**
   * How long after its due time an event's publish is still retried when it fails for a reason
   * a retry may fix (throttling, an outage); then it is reported as PUBLISH_FAILED. A topic that
   * is missing or refuses the scheduler fails at once.
   */
  readonly emitMaxAgeSeconds: number;
  /**
   * The loader's sweep sends an event stored for the loader again when it is still open this
   * long after its due time (its loading message or its delay-queue copy was lost).
   */
  readonly repairAfterSeconds: number;
  /**
   * Most publishes one emitter process may have answered but not yet recorded (their end writes
   * still on their way); a publish due beyond waits until one is recorded. A process that dies
   * publishes again at most this many events, plus the publishes in flight. 0: no bound (Lambda,
   * where one process holds one batch); the local service, whose one process holds every batch and
   * writes to DynamoDB Local, which records ends slower than a spike publishes, sets one.
   */
  readonly emitterMaxUnrecordedEnds: number;
  /**
   * How long the emitter may keep an end that has answered before writing it, to write it with
   * those answered after it: fewer, larger writes where each write has a high fixed cost
   * (DynamoDB Local commits one transaction at a time). A write goes at once when it is full.
   * The publish happened already: this delays only the record, never a delivery. 0 (AWS): each
   * end goes as soon as a write is free.
   */
  readonly emitterEndsLingerMs: number;
  /**
   * Longest wait between two tries of ends handed over through the delay queue (an emission the
   * emitter published but could not record). Tries start a second apart and double up to this.
   */
  readonly endsRetryMaxSeconds: number;
  /**
   * How long a repaired copy waits in the delay queue before the emitter reads its record: at
   * least `endsRetryMaxSeconds` plus REPAIR_DELAY_MARGIN_SECONDS, so that an end handed over for
   * the event has been tried again by then, and recorded if its write can succeed; the copy then
   * finds the event ended and is dropped instead of publishing it a second time.
   */
  readonly repairDelaySeconds: number;
  /** How batches of conditional writes are made: `statements` (AWS) or `transactions` (DynamoDB Local). */
  readonly dynamodbBatchWrites: BatchWriteMode;
  /** How long after its due time an event's record (and its dedup marker) is kept. */
  readonly retentionSeconds: number;

  readonly logLevel: string;
  /** Emit CloudWatch EMF metrics to stdout (on in Lambda, off locally). */
  readonly metricsEnabled: boolean;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

/** Environment variable names, shared with the CDK app and the local runtime. */
export const ENV = {
  region: 'AWS_REGION',
  messagingEndpoint: 'SCHEDULER_MESSAGING_ENDPOINT',
  dynamodbEndpoint: 'SCHEDULER_DYNAMODB_ENDPOINT',
  tableName: 'SCHEDULER_TABLE_NAME',
  delayQueueUrl: 'SCHEDULER_DELAY_QUEUE_URL',
  loadingQueueUrl: 'SCHEDULER_LOADING_QUEUE_URL',
  changesQueueUrl: 'SCHEDULER_CHANGES_QUEUE_URL',
  topicPrefix: 'SCHEDULER_TOPIC_PREFIX',
  registryMaxAgeMs: 'SCHEDULER_REGISTRY_MAX_AGE_MS',
  accountId: 'SCHEDULER_ACCOUNT_ID',
  ownTopicArns: 'SCHEDULER_OWN_TOPIC_ARNS',
  maxScheduleAheadSeconds: 'SCHEDULER_MAX_SCHEDULE_AHEAD_SECONDS',
  nearPathWindowSeconds: 'SCHEDULER_NEAR_PATH_WINDOW_SECONDS',
  loaderIntervalSeconds: 'SCHEDULER_LOADER_INTERVAL_SECONDS',
  loaderLookaheadSeconds: 'SCHEDULER_LOADER_LOOKAHEAD_SECONDS',
  loaderTickBudgetSeconds: 'SCHEDULER_LOADER_TICK_BUDGET_SECONDS',
  loaderInitialCatchUpSeconds: 'SCHEDULER_LOADER_INITIAL_CATCH_UP_SECONDS',
  loadingChunkSize: 'SCHEDULER_LOADING_CHUNK_SIZE',
  bucketSeconds: 'SCHEDULER_BUCKET_SECONDS',
  shardCount: 'SCHEDULER_SHARD_COUNT',
  indexQueuedEvents: 'SCHEDULER_INDEX_QUEUED_EVENTS',
  emitterLeadMs: 'SCHEDULER_EMITTER_LEAD_MS',
  changeCutoffSeconds: 'SCHEDULER_CHANGE_CUTOFF_SECONDS',
  changeWriteTimeoutMs: 'SCHEDULER_CHANGE_WRITE_TIMEOUT_MS',
  emitMaxAgeSeconds: 'SCHEDULER_EMIT_MAX_AGE_SECONDS',
  repairAfterSeconds: 'SCHEDULER_REPAIR_AFTER_SECONDS',
  emitterMaxUnrecordedEnds: 'SCHEDULER_EMITTER_MAX_UNRECORDED_ENDS',
  emitterEndsLingerMs: 'SCHEDULER_EMITTER_ENDS_LINGER_MS',
  endsRetryMaxSeconds: 'SCHEDULER_ENDS_RETRY_MAX_SECONDS',
  repairDelaySeconds: 'SCHEDULER_REPAIR_DELAY_SECONDS',
  dynamodbBatchWrites: 'SCHEDULER_DYNAMODB_BATCH_WRITES',
  retentionSeconds: 'SCHEDULER_RETENTION_SECONDS',
  logLevel: 'LOG_LEVEL',
  metricsEnabled: 'SCHEDULER_METRICS_ENABLED',
} as const satisfies Record<keyof SchedulerConfig, string>;

export const DEFAULTS = {
  region: 'us-east-1',
  topicPrefix: 'adhoc-scheduler',
  ownTopicArns: [],
  registryMaxAgeMs: 5000,
  maxScheduleAheadSeconds: 365 * 24 * 3600,
  nearPathWindowSeconds: 600,
  loaderIntervalSeconds: 60,
  loaderTickBudgetSeconds: 45,
  loaderInitialCatchUpSeconds: 3600,
  loadingChunkSize: 100,
  bucketSeconds: 60,
  shardCount: 8,
  indexQueuedEvents: true,
  emitterLeadMs: 1300,
  changeCutoffSeconds: 5,
  changeWriteTimeoutMs: 1000,
  emitMaxAgeSeconds: 24 * 3600,
  repairAfterSeconds: 300,
  emitterMaxUnrecordedEnds: 0,
  emitterEndsLingerMs: 0,
  endsRetryMaxSeconds: 30,
  repairDelaySeconds: 60,
  dynamodbBatchWrites: 'statements',
  retentionSeconds: 7 * 24 * 3600,
  logLevel: 'info',
} as const;

/**
 * The whole numbers the settings the capacity model also takes may hold: loadConfig refuses
 * anything outside them, and the load test's capacity command accepts what the service does.
 */
export const SETTING_RANGES = {
  nearPathWindowSeconds: { min: 2, max: SQS_MAX_DELAY_SECONDS },
  loaderIntervalSeconds: { min: 1, max: 3600 },
  loaderLookaheadSeconds: { min: 1, max: SQS_MAX_DELAY_SECONDS },
  loaderTickBudgetSeconds: { min: 1, max: 900 },
  loadingChunkSize: { min: 1, max: 1000 },
  shardCount: { min: 1, max: 256 },
} as const satisfies Partial<Record<keyof SchedulerConfig, { readonly min: number; readonly max: number }>>;

/** A setting of SETTING_RANGES from the environment, its default when unset. */
function rangedInteger(env: Env, key: keyof typeof SETTING_RANGES, fallback: number): number {
  return integer(env, ENV[key], fallback, SETTING_RANGES[key].min, SETTING_RANGES[key].max);
}

function required(env: Env, key: string): string {
  const value = env[key];
  if (value === undefined || value === '') throw new ConfigError(`${key} is required`);
  return value;
}

function integer(env: Env, key: string, fallback: number, min: number, max: number): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${key} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function boolean(env: Env, key: string, fallback: boolean): boolean {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${key} must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, key: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${key} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

function accountId(env: Env, key: string): string | undefined {
  const raw = env[key];
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{12}$/.test(raw)) throw new ConfigError(`${key} must be an AWS account id (12 digits), got "${raw}"`);
  return raw;
}

/** The same form as a request's target (shared/schema/schedule-request.schema.json). */
const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;

function topicArns(env: Env, key: string): readonly string[] {
  const raw = env[key];
  if (raw === undefined || raw === '') return DEFAULTS.ownTopicArns;
  const arns = raw.split(',').map((arn) => arn.trim());
  const invalid = arns.find((arn) => !TOPIC_ARN.test(arn));
  if (invalid !== undefined) throw new ConfigError(`${key} must be SNS topic ARNs separated by commas, got "${invalid}" in "${raw}"`);
  return arns;
}

/**
 * What a repaired copy's delay must leave beyond the longest wait between two tries of handed-over
 * ends: the emitter's batching window (1 s) and its receive, and the end write itself.
 */
export const REPAIR_DELAY_MARGIN_SECONDS = 10;

/** The loader's timings, which must keep it ahead of the near-path window. */
function loaderTimings(env: Env): Pick<SchedulerConfig, 'nearPathWindowSeconds' | 'loaderIntervalSeconds' | 'loaderLookaheadSeconds'> {
  const nearPathWindowSeconds = rangedInteger(env, 'nearPathWindowSeconds', DEFAULTS.nearPathWindowSeconds);
  const loaderIntervalSeconds = rangedInteger(env, 'loaderIntervalSeconds', DEFAULTS.loaderIntervalSeconds);
  const loaderLookaheadSeconds = rangedInteger(env, 'loaderLookaheadSeconds', nearPathWindowSeconds - loaderIntervalSeconds);
  if (loaderLookaheadSeconds + loaderIntervalSeconds > nearPathWindowSeconds) {
    throw new ConfigError(
      `${ENV.loaderLookaheadSeconds} (${loaderLookaheadSeconds}) plus ${ENV.loaderIntervalSeconds} (${loaderIntervalSeconds}) ` +
        `must not exceed ${ENV.nearPathWindowSeconds} (${nearPathWindowSeconds}), or events stored just past the window could be missed`,
    );
  }
  if (loaderLookaheadSeconds <= loaderIntervalSeconds) {
    throw new ConfigError(
      `${ENV.loaderLookaheadSeconds} (${loaderLookaheadSeconds}) must exceed ${ENV.loaderIntervalSeconds} (${loaderIntervalSeconds}), ` +
        'or events would be loaded after their due time',
    );
  }
  return { nearPathWindowSeconds, loaderIntervalSeconds, loaderLookaheadSeconds };
}

/** The emitter's timings and the changes' cutoff, which must leave a change or a repair no way to cross the emitter's read. */
function emitterTimings(
  env: Env,
): Pick<
  SchedulerConfig,
  'emitterLeadMs' | 'changeCutoffSeconds' | 'changeWriteTimeoutMs' | 'repairAfterSeconds' | 'endsRetryMaxSeconds' | 'repairDelaySeconds'
> {
  const emitterLeadMs = integer(env, ENV.emitterLeadMs, DEFAULTS.emitterLeadMs, 0, 5000);
  const changeCutoffSeconds = integer(env, ENV.changeCutoffSeconds, DEFAULTS.changeCutoffSeconds, 1, 3600);
  const changeWriteTimeoutMs = integer(env, ENV.changeWriteTimeoutMs, DEFAULTS.changeWriteTimeoutMs, 100, 10_000);
  // The emitter may read a record up to lead + 1 s before due (SQS delays are whole seconds).
  const earliestReadMs = emitterLeadMs + 1000;
  // A change checked against the cutoff when its write goes out lands within the write's timeout, or not at all.
  if (changeCutoffSeconds * 1000 < earliestReadMs + changeWriteTimeoutMs) {
    throw new ConfigError(
      `${ENV.changeCutoffSeconds} (${changeCutoffSeconds}) must be at least ${Math.ceil((earliestReadMs + changeWriteTimeoutMs) / 1000)}: ` +
        `the emitter reads an event's record up to ${ENV.emitterLeadMs} (${emitterLeadMs}) + 1000 ms before it is due, ` +
        `and a change written before the cutoff may land up to ${ENV.changeWriteTimeoutMs} (${changeWriteTimeoutMs}) later`,
    );
  }
  const repairAfterSeconds = integer(env, ENV.repairAfterSeconds, DEFAULTS.repairAfterSeconds, 1, 7 * 24 * 3600);
  // Before then an event may still be on its way to the emitter, or waiting in it.
  if (repairAfterSeconds * 1000 < earliestReadMs + 1000) {
    throw new ConfigError(
      `${ENV.repairAfterSeconds} (${repairAfterSeconds}) must be at least ${Math.ceil((earliestReadMs + 1000) / 1000)}: ` +
        `the emitter holds an event from ${ENV.emitterLeadMs} (${emitterLeadMs}) + 1000 ms before it is due`,
    );
  }
  const endsRetryMaxSeconds = integer(
    env,
    ENV.endsRetryMaxSeconds,
    DEFAULTS.endsRetryMaxSeconds,
    1,
    SQS_MAX_DELAY_SECONDS - REPAIR_DELAY_MARGIN_SECONDS,
  );
  const repairDelaySeconds = integer(env, ENV.repairDelaySeconds, DEFAULTS.repairDelaySeconds, 1, SQS_MAX_DELAY_SECONDS);
  if (repairDelaySeconds < endsRetryMaxSeconds + REPAIR_DELAY_MARGIN_SECONDS) {
    throw new ConfigError(
      `${ENV.repairDelaySeconds} (${repairDelaySeconds}) must be at least ${ENV.endsRetryMaxSeconds} (${endsRetryMaxSeconds}) + ${REPAIR_DELAY_MARGIN_SECONDS}: ` +
        'a repaired copy must not be read before an end handed over for its event has been tried again, or the event could be published twice',
    );
  }
  return { emitterLeadMs, changeCutoffSeconds, changeWriteTimeoutMs, repairAfterSeconds, endsRetryMaxSeconds, repairDelaySeconds };
}

/** Reads and checks every setting; throws a ConfigError naming the variable at fault. */
export function loadConfig(env: Env = process.env): SchedulerConfig {
  const { nearPathWindowSeconds, loaderIntervalSeconds, loaderLookaheadSeconds } = loaderTimings(env);
  const { emitterLeadMs, changeCutoffSeconds, changeWriteTimeoutMs, repairAfterSeconds, endsRetryMaxSeconds, repairDelaySeconds } =
    emitterTimings(env);
  return {
    region: env[ENV.region] || DEFAULTS.region,
    messagingEndpoint: env[ENV.messagingEndpoint] || undefined,
    dynamodbEndpoint: env[ENV.dynamodbEndpoint] || undefined,
    tableName: required(env, ENV.tableName),
    delayQueueUrl: required(env, ENV.delayQueueUrl),
    loadingQueueUrl: required(env, ENV.loadingQueueUrl),
    changesQueueUrl: required(env, ENV.changesQueueUrl),
    topicPrefix: env[ENV.topicPrefix] || DEFAULTS.topicPrefix,
    registryMaxAgeMs: integer(env, ENV.registryMaxAgeMs, DEFAULTS.registryMaxAgeMs, 0, 60_000),
    accountId: accountId(env, ENV.accountId),
    ownTopicArns: topicArns(env, ENV.ownTopicArns),
    maxScheduleAheadSeconds: integer(env, ENV.maxScheduleAheadSeconds, DEFAULTS.maxScheduleAheadSeconds, 60, 10 * 366 * 24 * 3600),
    nearPathWindowSeconds,
    loaderIntervalSeconds,
    loaderLookaheadSeconds,
    loaderTickBudgetSeconds: rangedInteger(env, 'loaderTickBudgetSeconds', DEFAULTS.loaderTickBudgetSeconds),
    loaderInitialCatchUpSeconds: integer(env, ENV.loaderInitialCatchUpSeconds, DEFAULTS.loaderInitialCatchUpSeconds, 0, 366 * 24 * 3600),
    loadingChunkSize: rangedInteger(env, 'loadingChunkSize', DEFAULTS.loadingChunkSize),
    bucketSeconds: integer(env, ENV.bucketSeconds, DEFAULTS.bucketSeconds, 1, 3600),
    shardCount: rangedInteger(env, 'shardCount', DEFAULTS.shardCount),
    indexQueuedEvents: boolean(env, ENV.indexQueuedEvents, DEFAULTS.indexQueuedEvents),
    emitterLeadMs,
    changeCutoffSeconds,
    changeWriteTimeoutMs,
    emitMaxAgeSeconds: integer(env, ENV.emitMaxAgeSeconds, DEFAULTS.emitMaxAgeSeconds, 1, 14 * 24 * 3600),
    repairAfterSeconds,
    emitterMaxUnrecordedEnds: integer(env, ENV.emitterMaxUnrecordedEnds, DEFAULTS.emitterMaxUnrecordedEnds, 0, 1_000_000),
    emitterEndsLingerMs: integer(env, ENV.emitterEndsLingerMs, DEFAULTS.emitterEndsLingerMs, 0, 5000),
    endsRetryMaxSeconds,
    repairDelaySeconds,
    dynamodbBatchWrites: oneOf<BatchWriteMode>(env, ENV.dynamodbBatchWrites, DEFAULTS.dynamodbBatchWrites, ['statements', 'transactions']),
    retentionSeconds: integer(env, ENV.retentionSeconds, DEFAULTS.retentionSeconds, 60, 10 * 366 * 24 * 3600),
    logLevel: env[ENV.logLevel] || DEFAULTS.logLevel,
    metricsEnabled: boolean(env, ENV.metricsEnabled, false),
  };
}

/**
 * The inverse of loadConfig: the environment that reproduces a config (for Lambda and child
 * processes). Settings at their default are left out: Lambda's environment is limited to 4 KB.
 */
export function configToEnv(config: SchedulerConfig): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, name] of Object.entries(ENV) as [keyof SchedulerConfig, string][]) {
    const value = config[key];
    if (value === undefined || (DEFAULTS as Readonly<Record<string, unknown>>)[key] === value) continue;
    if (Array.isArray(value)) {
      if (value.length > 0) env[name] = value.join(',');
      continue;
    }
    env[name] = typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return env;
}
