import type { SQSRecord } from 'aws-lambda';
import type { SchedulerConfig } from '../config.js';
import type { NewBulkCancelJob } from '../domain/bulk-cancel.js';
import { bulkCancelJobId } from '../domain/table-keys.js';
import { expiresAtFor, requestHashOf } from '../domain/event.js';
import { EVENT_STATE } from '../domain/lifecycle.js';
import { type Placement, placementFor } from '../domain/placement.js';
import { type EventRejectedError, REASON } from '../domain/reasons.js';
import { isInStack } from '../domain/scheduler-topics.js';
import type { SeriesChange } from '../domain/series-changes.js';
import type { Tenant } from '../domain/tenants.js';
import { topicPartition } from '../domain/topic-arn.js';
import { parseInputMessage } from '../domain/validation.js';
import { sentAt } from './batch.js';
import { shardOf } from '../domain/sharding.js';
import type { NewEvent } from './ports/event-store.js';
import type { SeriesEntry } from './ports/series-store.js';
import type { TenantLookup } from './ports/tenants.js';

/**
 * Ingest's first step: what each input message asks (planIngest), without I/O. ingest.ts applies
 * the plan to the store and the delay queue.
 */

/** One input message as the ingest queue holds it: SNS's envelope says which topic it came through. */
export interface InputMessage {
  readonly text: string;
  readonly inputMessageId: string;
  /** The input topic, from SNS's envelope; undefined when the message was not delivered by SNS. */
  readonly topicArn: string | undefined;
  /** When the client published it (SNS's Timestamp), epoch ms; when SQS first received it otherwise. */
  readonly publishedAt: number;
}

export function unwrapInput(record: SQSRecord): InputMessage {
  const receivedAt = sentAt(record);
  try {
    const envelope = JSON.parse(record.body) as {
      Type?: unknown;
      Message?: unknown;
      MessageId?: unknown;
      TopicArn?: unknown;
      Timestamp?: unknown;
    };
    if (
      envelope.Type === 'Notification' &&
      typeof envelope.Message === 'string' &&
      typeof envelope.MessageId === 'string' &&
      typeof envelope.TopicArn === 'string'
    ) {
      const publishedAt = typeof envelope.Timestamp === 'string' ? Date.parse(envelope.Timestamp) : Number.NaN;
      return {
        text: envelope.Message,
        inputMessageId: envelope.MessageId,
        topicArn: envelope.TopicArn,
        publishedAt: Number.isNaN(publishedAt) ? receivedAt : publishedAt,
      };
    }
  } catch {
    // Not an envelope: it has no tenant, and is refused as such.
  }
  return { text: record.body, inputMessageId: record.messageId, topicArn: undefined, publishedAt: receivedAt };
}

/** What one input message asks of the store and the queues. */
export type Intent =
  /** Nobody's message (no tenant's topic, or a disabled one): logged, nothing else. */
  | {
      readonly kind: 'unowned';
      readonly reason: typeof REASON.UNKNOWN_TENANT | typeof REASON.FOREIGN_INPUT_TOPIC | typeof REASON.TENANT_DISABLED;
    }
  | { readonly kind: 'refuse'; readonly error: EventRejectedError }
  | { readonly kind: 'create'; readonly entry: NewEvent }
  /** A recurring series: stored, then taken at once (its occurrences within the near-path window sent). */
  | { readonly kind: 'create-series'; readonly entry: SeriesEntry }
  | { readonly kind: 'cancel'; readonly eventId: string }
  | {
      readonly kind: 'reschedule';
      readonly eventId: string;
      readonly dueAt: number;
      readonly placement: Placement;
      readonly queuedBy: string;
    }
  /** A job that cancels the tenant's events with a label, page by page (see bulk-cancel.ts). */
  | { readonly kind: 'bulk-cancel'; readonly job: NewBulkCancelJob }
  | { readonly kind: 'pause'; readonly note: string | undefined }
  | { readonly kind: 'resume' }
  /** A pause, resume or replacement of one series (see series-changes.ts). */
  | { readonly kind: 'change-series'; readonly eventId: string; readonly change: SeriesChange };

/** An input message with its tenant, where its refusals go, and its intent. */
export interface PlannedMessage {
  readonly record: SQSRecord;
  readonly message: InputMessage;
  readonly tenant: Tenant | undefined;
  /** The tenant's own failure topic named in the message, where a refusal is reported (else its dead-letter topic). */
  readonly failureTopic: string | undefined;
  /** The request as parsed (or the raw text), quoted in a refusal. */
  readonly input: unknown;
  readonly intent: Intent;
}

export interface IngestPlanContext {
  readonly config: Pick<
    SchedulerConfig,
    | 'region'
    | 'nearPathWindowSeconds'
    | 'shardCount'
    | 'retentionSeconds'
    | 'topicPrefix'
    | 'accountId'
    | 'ownTopicArns'
    | 'maxScheduleAheadSeconds'
    | 'emitMaxAgeSeconds'
  >;
  /** The batch's tenants, looked up before the plan (see batchTenants). */
  readonly tenants: TenantLookup;
  readonly now: number;
  /** A new token: of a delay-queue copy (see EventRecord.queuedBy), or of a create attempt (see EventRecord.createdBy). */
  readonly newToken: () => string;
}

/** An input record and its message, unwrapped from SNS's envelope once. */
export interface UnwrappedRecord {
  readonly record: SQSRecord;
  readonly message: InputMessage;
}

export function unwrapBatch(records: readonly SQSRecord[]): UnwrappedRecord[] {
  return records.map((record) => ({ record, message: unwrapInput(record) }));
}

/**
 * The topics a request names for the scheduler to publish to (`target`, `failure_topic`), read
 * without validating it: what the registry is asked about the accounts they are in, before the
 * request is checked against its tenant's rights.
 */
export function topicsNamedBy(message: InputMessage): readonly (string | undefined)[] {
  try {
    const request: unknown = JSON.parse(message.text);
    if (typeof request !== 'object' || request === null) return [];
    const { target, failure_topic: failureTopic } = request as { target?: unknown; failure_topic?: unknown };
    return [typeof target === 'string' ? target : undefined, typeof failureTopic === 'string' ? failureTopic : undefined];
  } catch {
    return [];
  }
}

function planOne(context: IngestPlanContext, { record, message }: UnwrappedRecord): PlannedMessage {
  const { config, now } = context;
  const tenant = message.topicArn === undefined ? undefined : context.tenants.forTopic(message.topicArn);
  const unowned = { record, message, tenant, failureTopic: undefined, input: message.text };
  if (tenant === undefined || message.topicArn === undefined)
    return { ...unowned, intent: { kind: 'unowned', reason: REASON.UNKNOWN_TENANT } };
  // The tenant is known by the topic's name; a topic of that name in another account or region is not its.
  if (!isInStack(message.topicArn, config)) return { ...unowned, intent: { kind: 'unowned', reason: REASON.FOREIGN_INPUT_TOPIC } };
  if (!tenant.enabled) return { ...unowned, intent: { kind: 'unowned', reason: REASON.TENANT_DISABLED } };
  const parsed = parseInputMessage(message.text, message.inputMessageId, {
    tenant,
    region: config.region,
    // The input topic is the scheduler's own: SNS names it in the scheduler's partition.
    partition: topicPartition(message.topicArn) ?? '',
    schedulerTopics: config,
    now,
    maxScheduleAheadSeconds: config.maxScheduleAheadSeconds,
    publishedAt: message.publishedAt,
    defaultCatchUpSeconds: config.emitMaxAgeSeconds,
  });
  const planned = { record, message, tenant, failureTopic: parsed.failureTopic, input: parsed.input };
  if (!parsed.accepted) return { ...planned, intent: { kind: 'refuse', error: parsed.error } };
  const { request } = parsed;
  switch (request.kind) {
    case 'schedule': {
      const { event, clientId } = request;
      const placement = placementFor(config, event.id, event.dueAt, now);
      const entry: NewEvent = {
        event,
        clientId,
        inputMessageId: message.inputMessageId,
        requestHash: requestHashOf(event),
        placement,
        queuedBy: placement.state === EVENT_STATE.queued ? context.newToken() : undefined,
        createdBy: context.newToken(),
        quotas: tenant.quotas,
        now,
        expiresAt: expiresAtFor(event.dueAt, config.retentionSeconds),
      };
      return { ...planned, intent: { kind: 'create', entry } };
    }
    case 'series': {
      const { series, dueAt } = request;
      const entry: SeriesEntry = {
        series,
        dueAt,
        inputMessageId: message.inputMessageId,
        shard: shardOf(series.id, config),
        quotas: tenant.quotas,
        now,
        expiresAt: expiresAtFor(dueAt, config.retentionSeconds),
      };
      return { ...planned, intent: { kind: 'create-series', entry } };
    }
    // The request says all its intent needs.
    case 'pause':
    case 'resume':
    case 'cancel':
    case 'change-series':
      return { ...planned, intent: request };
    case 'reschedule':
      return {
        ...planned,
        intent: {
          kind: 'reschedule',
          eventId: request.eventId,
          dueAt: request.dueAt,
          placement: placementFor(config, request.eventId, request.dueAt, now),
          queuedBy: context.newToken(),
        },
      };
    case 'bulk-cancel':
      return {
        ...planned,
        intent: {
          kind: 'bulk-cancel',
          job: {
            jobId: bulkCancelJobId(message.inputMessageId),
            tenant: tenant.id,
            label: request.label,
            fromMs: now,
            dueBefore: request.dueBefore,
            failureTopic: parsed.failureTopic,
            dryRun: false,
            createdAt: now,
            expiresAt: expiresAtFor(now, config.retentionSeconds),
          },
        },
      };
  }
}

/** Turns a batch of input messages into what each asks for: pure, no I/O (the apply step does that). */
export function planIngest(context: IngestPlanContext, inputs: readonly UnwrappedRecord[]): PlannedMessage[] {
  return inputs.map((input) => planOne(context, input));
}
