import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EmissionEnding } from '../domain/emission.js';
import type { ScheduledEvent } from '../domain/event.js';
import type { Quotas } from '../domain/tenants.js';
import type { EventRecord } from '../domain/lifecycle.js';
import { DEFAULTS } from '../config.js';
import type {
  Admitted,
  Carry,
  ChangeRefused,
  ChangeRequest,
  ChangeScope,
  CreateOptions,
  CreateOutcome,
  EndsRecorded,
  EventStore,
  HoldOutcome,
  LoadingTake,
  NewEvent,
  PlacesSettled,
  Requeue,
  TenantAdmission,
  Unreleased,
} from '../app/ports/event-store.js';
import type { Clock } from '../app/ports/process.js';
import type { EndCountIncrement } from '../domain/end-counts.js';
import { DynamoDbDueDirectory } from './dynamodb-due-directory.js';
import { DynamoDbEndCounters } from './dynamodb-end-counters.js';
import type { BatchWriteMode } from '../config.js';
import { conditionalWriter } from './dynamodb-conditional-writes.js';
import { cancelEvent, rescheduleEvent } from './dynamodb-event-changes.js';
import { admitEvents, createEvents } from './dynamodb-event-creates.js';
import { endEmissions, releasePlaces } from './dynamodb-event-ends.js';
import { readEvents, storedPayload, type EventTable } from './dynamodb-event-reads.js';
import { takeForLoading } from './dynamodb-loading-take.js';
import { DynamoDbQuotaCounters } from './dynamodb-quota-counters.js';
import { carryEvent, holdEvent, requeueEvent } from './dynamodb-queued-event-writes.js';
import { systemClock } from './system-clock.js';

/**
 * The events' records in DynamoDB: each change of an event's state a conditional write, made by
 * the module of its job (creates, the loading take, ends, a client's changes, the writes on a
 * queued event's copy), over one EventTable built here.
 */

export interface DynamoDbEventStoreOptions {
  /** How batches of conditional writes are made (see BatchWriteMode); statements by default, as on AWS. */
  readonly batchWrites?: BatchWriteMode;
  /** What a change's cutoff is checked against, at each attempt to write it; the system's by default. */
  readonly clock?: Clock;
  /** How long one attempt to write a change may take (see SchedulerConfig.changeWriteTimeoutMs). */
  readonly changeWriteTimeoutMs?: number;
  /** Whether events placed in the delay queue get a tenant-index entry (SchedulerConfig.indexQueuedEvents, on by default). */
  readonly indexQueuedEvents?: boolean;
  /** The shards of the tenant index (SchedulerConfig.shardCount): where an event leaving its held partition goes. */
  readonly shardCount?: number;
  /** How long an event's record is kept after it is due (SchedulerConfig.retentionSeconds): the due directory's entries last as long. */
  readonly retentionSeconds?: number;
}

export class DynamoDbEventStore implements EventStore {
  readonly counters: DynamoDbQuotaCounters;
  private readonly endCounters: DynamoDbEndCounters;
  private readonly table: EventTable;

  constructor(client: DynamoDBDocumentClient, tableName: string, options: DynamoDbEventStoreOptions = {}) {
    this.counters = new DynamoDbQuotaCounters(client, tableName);
    this.endCounters = new DynamoDbEndCounters(client, tableName);
    this.table = {
      client,
      tableName,
      writer: conditionalWriter(options.batchWrites ?? 'statements', client, tableName),
      counters: this.counters,
      clock: options.clock ?? systemClock,
      changeWriteTimeoutMs: options.changeWriteTimeoutMs ?? DEFAULTS.changeWriteTimeoutMs,
      indexQueuedEvents: options.indexQueuedEvents ?? DEFAULTS.indexQueuedEvents,
      shardCount: options.shardCount ?? DEFAULTS.shardCount,
      dueDirectory: new DynamoDbDueDirectory(client, tableName, options.retentionSeconds ?? DEFAULTS.retentionSeconds),
    };
  }

  createMany(entries: readonly NewEvent[], options: CreateOptions = {}): Promise<CreateOutcome[]> {
    return createEvents(this.table, entries, options);
  }

  holdPlaces(tenant: string, quotas: Quotas, now: number, count: number): Promise<boolean> {
    return this.counters.reserveAll(tenant, quotas, now, count);
  }

  settlePlaces(tenant: string, settled: PlacesSettled): Promise<boolean> {
    return this.counters.settle(tenant, settled.heldAt, settled.unused, settled.freed).then(
      () => true,
      () => false,
    );
  }

  admit(admission: TenantAdmission): Promise<Admitted> {
    return admitEvents(this.table, admission);
  }

  requeue(id: string, requeue: Requeue): Promise<boolean> {
    return requeueEvent(this.table, id, requeue);
  }

  storedPayload(record: EventRecord): Promise<string> {
    return storedPayload(this.table, record);
  }

  read(ids: readonly string[]): Promise<ReadonlyMap<string, EventRecord>> {
    return readEvents(this.table, ids);
  }

  takeForLoading(ids: readonly string[], take: LoadingTake): Promise<ScheduledEvent[]> {
    return takeForLoading(this.table, ids, take);
  }

  endEmissions(ends: readonly EmissionEnding[]): Promise<EndsRecorded> {
    return endEmissions(this.table, ends);
  }

  releasePlaces(freed: ReadonlyMap<string, number>): Promise<readonly Unreleased[]> {
    return releasePlaces(this.table, freed);
  }

  countEnds(increments: readonly EndCountIncrement[]): Promise<void> {
    return this.endCounters.add(increments);
  }

  cancel(
    id: string,
    scope: ChangeScope,
    change: ChangeRequest & { readonly expiresAt: number },
  ): Promise<{ readonly outcome: 'cancelled' } | ChangeRefused> {
    return cancelEvent(this.table, id, scope, change);
  }

  reschedule(
    id: string,
    scope: ChangeScope,
    change: Parameters<EventStore['reschedule']>[2],
  ): Promise<{ readonly outcome: 'rescheduled'; readonly event: ScheduledEvent | undefined } | ChangeRefused> {
    return rescheduleEvent(this.table, id, scope, change);
  }

  hold(
    record: EventRecord,
    from: string,
    hold: { readonly payload: string; readonly heldKey: string; readonly now: number },
  ): Promise<HoldOutcome> {
    return holdEvent(this.table, record, from, hold);
  }

  carry(record: EventRecord, from: string, onward: Carry, now: number): Promise<boolean> {
    return carryEvent(this.table, record, from, onward, now);
  }
}
