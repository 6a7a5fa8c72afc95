import type { SQSRecord } from 'aws-lambda';
import { DEFAULTS } from '../src/config.js';
import type { NewBulkCancelJob } from '../src/domain/bulk-cancel.js';
import { EVENT_STATE } from '../src/domain/lifecycle.js';
import { tenantShardKey } from '../src/domain/table-keys.js';
import type { SchedulerTopics } from '../src/domain/scheduler-topics.js';
import { TenantRegistry, PUBLIC_TENANT_ID, type Tenant, type TenantsDocument } from '../src/domain/tenants.js';
import { parseInputMessage, type ParseResult } from '../src/domain/validation.js';
import type { StoredRecord } from './memory-event-store.js';

/** The scheduler of these tests: its topics are named `scheduler-...` in account 000000000000. */
export const SCHEDULER_TOPICS: SchedulerTopics = { topicPrefix: 'scheduler', accountId: '000000000000', ownTopicArns: [] };

/** When the requests of these tests are handled: their dates (mid-2030) are within the default horizon of a year. */
export const PARSED_AT = Date.UTC(2030, 0, 1);

/** A registry with the public tenant and, unless replaced, tenant "acme" in account 111111111111. */
export function registry(document: TenantsDocument = { tenants: [{ id: 'acme', accounts: ['111111111111'] }] }): TenantRegistry {
  return new TenantRegistry(document, SCHEDULER_TOPICS.topicPrefix);
}

export function tenant(id = PUBLIC_TENANT_ID, document?: TenantsDocument): Tenant {
  const found = registry(document).tenant(id);
  if (!found) throw new Error(`no tenant ${id}`);
  return found;
}

/** The scheduler's region in these tests: every topic is there unless a test says otherwise. */
export const REGION = 'eu-west-1';

export function topicArn(name: string, region = REGION, account = '123456789012'): string {
  return `arn:aws:sns:${region}:${account}:${name}`;
}

/** A valid schedule request; `overrides` replace fields, and a field set to undefined is left out. */
export function scheduleRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const request: Record<string, unknown> = {
    date: '2030-06-15T12:30:00.250Z',
    target: topicArn('client-target'),
    user: 'alice',
    payload: '{"reminder":"stand-up"}',
    ...overrides,
  };
  for (const [field, value] of Object.entries(request)) {
    if (value === undefined) delete request[field];
  }
  return request;
}

let inputMessages = 0;
/** A fresh SNS message id for each publish, as SNS assigns them. */
export function inputMessageId(): string {
  inputMessages += 1;
  return `00000000-0000-4000-8000-${String(inputMessages).padStart(12, '0')}`;
}

/** Parses one publish's text on a tenant's topic (public by default), as ingest does in REGION (partition `aws`) at PARSED_AT. */
export function parse(text: string, on: Tenant = tenant(), messageId = inputMessageId()): ParseResult {
  return parseInputMessage(text, messageId, {
    tenant: on,
    region: REGION,
    partition: 'aws',
    schedulerTopics: SCHEDULER_TOPICS,
    now: PARSED_AT,
    maxScheduleAheadSeconds: DEFAULTS.maxScheduleAheadSeconds,
    defaultCatchUpSeconds: DEFAULTS.emitMaxAgeSeconds,
  });
}

/** Parses a request as the ingest function receives it: the JSON text of one publish, on a tenant's topic (public by default). */
export function validate(overrides: Record<string, unknown> = {}, messageId = inputMessageId(), on: Tenant = tenant()): ParseResult {
  return parse(JSON.stringify(scheduleRequest(overrides)), on, messageId);
}

/** The environment a deployment sets: only the required variables. */
export function requiredEnv(): Record<string, string> {
  return {
    SCHEDULER_TABLE_NAME: 'scheduler-events',
    SCHEDULER_DELAY_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/scheduler-delay',
    SCHEDULER_LOADING_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/scheduler-loading',
    SCHEDULER_CHANGES_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/scheduler-changes',
  };
}

/** The required variables and every other setting away from its default. */
export function customEnv(): Record<string, string> {
  return {
    ...requiredEnv(),
    AWS_REGION: 'eu-central-1',
    SCHEDULER_MESSAGING_ENDPOINT: 'http://127.0.0.1:4566',
    SCHEDULER_DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
    SCHEDULER_NEAR_PATH_WINDOW_SECONDS: '300',
    SCHEDULER_LOADER_INTERVAL_SECONDS: '30',
    SCHEDULER_LOADER_LOOKAHEAD_SECONDS: '240',
    SCHEDULER_LOADER_TICK_BUDGET_SECONDS: '20',
    SCHEDULER_LOADER_INITIAL_CATCH_UP_SECONDS: '120',
    SCHEDULER_LOADING_CHUNK_SIZE: '50',
    SCHEDULER_BUCKET_SECONDS: '30',
    SCHEDULER_SHARD_COUNT: '4',
    SCHEDULER_INDEX_QUEUED_EVENTS: 'false',
    SCHEDULER_EMITTER_LEAD_MS: '150',
    SCHEDULER_CHANGE_CUTOFF_SECONDS: '4',
    SCHEDULER_CHANGE_WRITE_TIMEOUT_MS: '800',
    SCHEDULER_EMIT_MAX_AGE_SECONDS: '7200',
    SCHEDULER_REPAIR_AFTER_SECONDS: '120',
    SCHEDULER_EMITTER_MAX_UNRECORDED_ENDS: '250',
    SCHEDULER_EMITTER_ENDS_LINGER_MS: '40',
    SCHEDULER_ENDS_RETRY_MAX_SECONDS: '20',
    SCHEDULER_REPAIR_DELAY_SECONDS: '45',
    SCHEDULER_DYNAMODB_BATCH_WRITES: 'transactions',
    SCHEDULER_RETENTION_SECONDS: '3600',
    LOG_LEVEL: 'debug',
    SCHEDULER_METRICS_ENABLED: 'true',
    SCHEDULER_TOPIC_PREFIX: 'scheduler-prod',
    SCHEDULER_ACCOUNT_ID: '123456789012',
    SCHEDULER_REGISTRY_MAX_AGE_MS: '2000',
    SCHEDULER_OWN_TOPIC_ARNS: 'arn:aws:sns:eu-central-1:123456789012:ops-alarms,arn:aws:sns:eu-central-1:123456789012:ops-pager',
    SCHEDULER_MAX_SCHEDULE_AHEAD_SECONDS: '2592000',
  };
}

/** An SQS record as Lambda hands it over. */
export function sqsRecord(body: string, messageId = 'sqs-1', receiveCount = 1): SQSRecord {
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: String(receiveCount), SentTimestamp: '0', SenderId: '', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:queue',
    awsRegion: 'eu-west-1',
  };
}

/**
 * The record of an event stored for the loader (the far path), as ingest leaves it: under its
 * tenant's stored shard in the tenant index (or another partition of it: a held event's).
 */
export function storedRecord(
  id: string,
  dueAt: number,
  indexed: { readonly tenantShard: string } = { tenantShard: tenantShardKey('acme', 's', 0) },
): StoredRecord {
  return {
    id,
    tenant: 'acme',
    user: 'alice',
    target: topicArn('out'),
    payload: 'hello',
    payloadKept: 'record',
    failureTopic: undefined,
    dueAt,
    version: 1,
    state: EVENT_STATE.scheduled,
    createdAt: dueAt - 3_600_000,
    expiresAt: Math.ceil(dueAt / 1000) + 3600,
    ...indexed,
  };
}

/** A bulk cancel of acme's events labelled campaign-7 from `fromMs`, asked for then, kept an hour. */
export function bulkCancelJob(fromMs: number, overrides: Partial<NewBulkCancelJob> = {}): NewBulkCancelJob {
  return {
    jobId: 'b-request-1',
    tenant: 'acme',
    label: 'campaign-7',
    fromMs,
    dueBefore: undefined,
    failureTopic: undefined,
    dryRun: false,
    createdAt: fromMs,
    expiresAt: fromMs / 1000 + 3600,
    ...overrides,
  };
}
