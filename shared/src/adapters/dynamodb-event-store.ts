import { TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EmissionEnding } from '../domain/emission.js';
import type { ScheduledEvent } from '../domain/event.js';
import { createdByOtherRequest, EVENT_STATE, eventOf, isOpen, type EventRecord } from '../domain/lifecycle.js';
import { openEventsCounterId, payloadItemId, tenantShardKey } from '../domain/table-keys.js';
import { TransientError } from '../domain/reasons.js';
import { DEFAULTS } from '../config.js';
import type {
  Carry,
  ChangeRefused,
  Clock,
  ChangeRequest,
  ChangeScope,
  CreateOutcome,
  EndsRecorded,
  EventStore,
  HoldOutcome,
  LoadingTake,
  NewEvent,
  Requeue,
  Unreleased,
} from '../app/ports.js';
import type { EndCountIncrement } from '../domain/end-counts.js';
import { DynamoDbEndCounters } from './dynamodb-end-counters.js';
import type { BatchWriteMode } from '../config.js';
import { batchDelete, batchGet, batchPut, pauseBeforeRound } from './dynamodb-batches.js';
import {
  conditionalWriter,
  followsLastChangeCondition,
  type Condition,
  type ConditionalWrite,
  type ConditionalWriter,
  type WriteOutcome,
} from './dynamodb-conditional-writes.js';
import { isEventItem, labelEntries, newEventItems, toRecord, withStoredPayload } from './dynamodb-event-item-codec.js';
import { DynamoDbQuotaCounters } from './dynamodb-quota-counters.js';
import { PAUSED_CONDITION } from './dynamodb-tenant-pauses.js';
import { systemClock } from './system-clock.js';
import { isConditionFailure, TABLE, transient, withoutSdkRetries } from './dynamodb-table.js';

/** A reschedule as the store writes it. */
type RescheduleChange = Parameters<EventStore['reschedule']>[2];

/** Open, of this tenant, and due after the change cutoff (or held, whenever due): what cancel and reschedule require. */
const CHANGEABLE =
  'attribute_exists(#id) AND tenant = :tenant AND (#state = :held OR (#state IN (:scheduled, :queued) AND #due > :cutoff))';

const is = (attribute: string, value: unknown): Condition => ({ op: '=', attribute, value });

/** Attempts at a cancel's or reschedule's write before its input message is left to be retried. */
const CHANGE_WRITE_ATTEMPTS = 3;

export interface DynamoDbEventStoreOptions {
  /** How batches of conditional writes are made (see BatchWriteMode); statements by default, as on AWS. */
  readonly batchWrites?: BatchWriteMode;
  /** What a change's cutoff is checked against, at each attempt to write it; the system's by default. */
  readonly clock?: Clock;
  /** How long one attempt to write a change may take (see SchedulerConfig.changeWriteTimeoutMs). */
  readonly changeWriteTimeoutMs?: number;
  /** Whether events placed in the delay queue get a tenant-index entry (SchedulerConfig.indexQueuedEvents, on by default). */
  readonly indexQueuedEvents?: boolean;
}

export class DynamoDbEventStore implements EventStore {
  readonly counters: DynamoDbQuotaCounters;
  private readonly endCounters: DynamoDbEndCounters;
  private readonly writer: ConditionalWriter;
  private readonly clock: Clock;
  private readonly changeWriteTimeoutMs: number;
  private readonly indexQueuedEvents: boolean;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: DynamoDbEventStoreOptions = {},
  ) {
    this.counters = new DynamoDbQuotaCounters(client, tableName);
    this.endCounters = new DynamoDbEndCounters(client, tableName);
    this.writer = conditionalWriter(options.batchWrites ?? 'statements', client, tableName);
    this.clock = options.clock ?? systemClock;
    this.changeWriteTimeoutMs = options.changeWriteTimeoutMs ?? DEFAULTS.changeWriteTimeoutMs;
    this.indexQueuedEvents = options.indexQueuedEvents ?? DEFAULTS.indexQueuedEvents;
  }

  async createMany(entries: readonly NewEvent[]): Promise<CreateOutcome[]> {
    const outcomes: CreateOutcome[] = [];
    // A repeated id in the batch waits for a later pass, to be found a duplicate there.
    let pending = entries.map((entry, index) => ({ entry, index }));
    while (pending.length > 0) {
      const seen = new Set<string>();
      const distinct = pending.filter(({ entry }) => !seen.has(entry.event.id) && seen.add(entry.event.id));
      const settled = await this.createTogether(distinct.map(({ entry }) => entry));
      for (const [position, { index }] of distinct.entries()) outcomes[index] = settled[position] as CreateOutcome;
      pending = pending.filter((waiting) => !distinct.includes(waiting));
    }
    return outcomes;
  }

  /**
   * Creates events of one tenant with distinct ids: places for all of them in one counter write
   * when they fit, else for as many as fit (the first ones). The others are refused over quota,
   * after one batched read that finds which of them exist already: a redelivered request is
   * never refused for a quota its event already counts in.
   */
  private async createTogether(entries: readonly NewEvent[]): Promise<CreateOutcome[]> {
    const [first] = entries;
    if (first === undefined) return [];
    const { taken, quota } = await this.counters.reserve(first.event.tenant, first.quotas, first.now, entries.length);
    const admitted = entries.slice(0, taken);
    const refused = entries.slice(taken);
    const [created, existing] = await Promise.all([
      this.insert(admitted),
      refused.length === 0 ? new Map<string, EventRecord>() : this.read(refused.map(({ event }) => event.id)).catch(() => undefined),
    ]);
    return [
      ...created,
      ...refused.map(({ event }): CreateOutcome => {
        if (existing === undefined) return { outcome: 'unknown' };
        const record = existing.get(event.id);
        if (record !== undefined) return { outcome: 'duplicate', existing: record };
        return { outcome: 'quota-exceeded', quota };
      }),
    ];
  }

  /** Gives back places taken for events that turned out to exist; false when the counter write failed. */
  private async giveBack(tenant: string, now: number, count: number): Promise<boolean> {
    return this.counters.unreserve(tenant, now, count).then(
      () => true,
      () => false,
    );
  }

  /**
   * Writes new events' records, each only if its id is new, with places taken for all of them.
   * Payloads kept apart are written first, so a record never names a payload that is not there.
   *
   * A refused insert is this attempt's own when its record carries the attempt's token (an
   * earlier try, whose answer was lost, wrote it): created, its place kept. Only the others are
   * duplicates, whose places are given back, and only once their records are read: what fails
   * from here fails only the entries it concerns, and gives nothing back (the count errs high).
   */
  private async insert(entries: readonly NewEvent[]): Promise<CreateOutcome[]> {
    const [first] = entries;
    if (first === undefined) return [];
    const items = entries.map((entry) => newEventItems(entry, { indexQueuedEvents: this.indexQueuedEvents }));
    const payloadItems = items.flatMap(({ payloadItem }) => (payloadItem ? [payloadItem] : []));
    if (payloadItems.length > 0) await batchPut(this.client, this.tableName, payloadItems);
    const inserted = await this.writer.write(items.map(({ record }) => ({ kind: 'insert', item: record })));
    const refused = entries.filter((_, index) => inserted[index] === 'refused');
    const existing =
      refused.length === 0 ? new Map<string, EventRecord>() : await this.read(refused.map(({ event }) => event.id)).catch(() => undefined);
    const isDuplicate = (entry: NewEvent): boolean => {
      const record = existing?.get(entry.event.id);
      return record !== undefined && record.createdBy !== entry.createdBy;
    };
    const duplicates = refused.filter(isDuplicate).length;
    const placeKept = duplicates > 0 && !(await this.giveBack(first.event.tenant, first.now, duplicates));
    // A payload item written for a duplicate that its record does not name (another request's
    // content, or a record from before items were named by it) would stay until its own expiry,
    // which the request chose: it goes now. Should that fail, it expires then; nothing names it.
    const strays = entries.flatMap((entry, index) => {
      const written = items[index]?.payloadItem?.[TABLE.partitionKey];
      const record = existing?.get(entry.event.id);
      return written !== undefined && record !== undefined && isDuplicate(entry) && payloadItemId(record) !== written
        ? [String(written)]
        : [];
    });
    if (strays.length > 0) await batchDelete(this.client, this.tableName, strays).catch(() => undefined);
    const labelled = await this.writeLabelEntries(entries, inserted, existing);
    return entries.map((entry, index): CreateOutcome => {
      if (!labelled[index]) return { outcome: 'unknown' };
      if (inserted[index] === 'applied') return { outcome: 'created' };
      const record = existing?.get(entry.event.id);
      if (inserted[index] === 'unknown' || record === undefined) return { outcome: 'unknown' };
      if (!isDuplicate(entry)) return { outcome: 'created' };
      return { outcome: 'duplicate', existing: record, ...(placeKept ? { placeKept } : {}) };
    });
  }

  /**
   * Writes the label entries of the events whose records exist as their requests made them: just
   * created, or created by an earlier delivery of the same request (whose entries a crash or a
   * lost answer may have left unwritten: they are written again, as the record now stands). An
   * entry is never written for a record another request made, or for one not written. Whether
   * each entry's event has its label entries (false: to retry, as its outcome is unknown).
   */
  private async writeLabelEntries(
    entries: readonly NewEvent[],
    inserted: readonly WriteOutcome[],
    existing: ReadonlyMap<string, EventRecord> | undefined,
  ): Promise<boolean[]> {
    const labelled = entries.map((entry, index) => {
      if ((entry.event.labels ?? []).length === 0) return [];
      if (inserted[index] === 'applied') return labelEntries({ ...entry.event, expiresAt: entry.expiresAt }, entry.placement.shard);
      const record = existing?.get(entry.event.id);
      if (inserted[index] !== 'refused' || record === undefined || createdByOtherRequest(record, entry.requestHash)) return [];
      return labelEntries(record, entry.placement.shard);
    });
    if (labelled.every((items) => items.length === 0)) return entries.map(() => true);
    const written = await batchPut(this.client, this.tableName, labelled.flat()).then(
      () => true,
      () => false,
    );
    return labelled.map((items) => written || items.length === 0);
  }

  async requeue(id: string, requeue: Requeue): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: id },
          UpdateExpression: 'SET queuedBy = :queuedBy, resentAt = :now',
          // As placedOnDelayQueueBy reads the record: its create placed version 1, a reschedule each later one.
          ConditionExpression: '#state = :queued AND version = :version AND attribute_not_exists(loadedBy) AND #placedBy = :by',
          ExpressionAttributeNames: { '#state': 'state', '#placedBy': requeue.version === 1 ? 'inputMessageId' : 'lastChangeBy' },
          ExpressionAttributeValues: {
            ':queuedBy': requeue.queuedBy,
            ':now': requeue.now,
            ':queued': EVENT_STATE.queued,
            ':version': requeue.version,
            ':by': requeue.placedBy,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw transient('UpdateItem', error);
    }
  }

  async storedPayload(record: EventRecord): Promise<string> {
    return (await this.payloadsOf([record])).get(record.id) ?? '';
  }

  /** The payloads of records whose payload the table holds, by id: in the record, or in its payload item. */
  private async payloadsOf(records: readonly EventRecord[]): Promise<Map<string, string>> {
    const apart = await batchGet(
      this.client,
      this.tableName,
      records.filter((record) => record.payload === undefined && record.payloadKept === 'item').map(payloadItemId),
    );
    // A payload item that is gone (it should not be) gives an empty payload, which the emitter cannot publish and reports.
    return new Map(records.map((record) => [record.id, record.payload ?? String(apart.get(payloadItemId(record))?.payload ?? '')]));
  }

  async read(ids: readonly string[]): Promise<ReadonlyMap<string, EventRecord>> {
    const items = await batchGet(this.client, this.tableName, ids);
    const records = new Map<string, EventRecord>();
    for (const [id, item] of items) if (isEventItem(item)) records.set(id, toRecord(item));
    return records;
  }

  async takeForLoading(ids: readonly string[], take: LoadingTake): Promise<ScheduledEvent[]> {
    const { overdueBefore, resume } = take;
    // What a first take finds: stored for the loader, or held for a resume.
    const waiting = resume === undefined ? EVENT_STATE.scheduled : EVENT_STATE.held;
    // The GSI is read eventually consistently; the records say what is still to load (reads are cheap, writes are not).
    const records = [...(await this.read(ids)).values()].filter((record) =>
      overdueBefore === undefined
        ? (resume !== undefined || record.dueAt < take.horizonMs) &&
          (record.state === waiting
            ? record.loadedBy === undefined || resume !== undefined
            : record.state === EVENT_STATE.queued && record.loadedBy === take.owner)
        : isOpen(record.state) && record.state !== EVENT_STATE.held && record.dueAt < overdueBefore && record.payloadKept !== 'queue',
    );
    const outcomes = await this.writer.write(
      records.map((record): ConditionalWrite => {
        const condition: Condition =
          overdueBefore === undefined
            ? {
                op: 'or',
                conditions: [
                  resume === undefined
                    ? { op: 'and', conditions: [is('state', EVENT_STATE.scheduled), { op: 'missing', attribute: 'loadedBy' }] }
                    : is('state', EVENT_STATE.held),
                  { op: 'and', conditions: [is('state', EVENT_STATE.queued), is('loadedBy', take.owner)] },
                ],
              }
            : // A repair takes the event only as it was read: anything since (an end, a change, a resend) wins.
              record.queuedBy === undefined
              ? { op: 'and', conditions: [is('state', record.state), { op: 'missing', attribute: 'queuedBy' }] }
              : { op: 'and', conditions: [is('state', record.state), is('queuedBy', record.queuedBy)] };
        return {
          kind: 'update',
          id: record.id,
          set: {
            state: EVENT_STATE.queued,
            // Each taker's own time: a resume, a repair or a load.
            [resume !== undefined ? 'resumedAt' : overdueBefore !== undefined ? 'sweptAt' : 'loadedAt']: take.now,
            queuedBy: take.queuedBy,
            loadedBy: take.owner,
            ...(resume === undefined ? {} : { [TABLE.ttlAttribute]: resume.expiresAt }),
          },
          // Out of the held index: the next resume does not read it again.
          ...(resume === undefined ? {} : { remove: [TABLE.bucketShardKey] }),
          condition: { op: 'and', conditions: [is('version', record.version), condition] },
        };
      }),
    );
    if (outcomes.includes('unknown'))
      throw new TransientError(`taking ${outcomes.filter((outcome) => outcome === 'unknown').length} events did not complete`);
    const taken = records.filter((_, index) => outcomes[index] === 'applied');
    const payloads = await this.payloadsOf(taken);
    return taken.map((record) => eventOf(record, payloads.get(record.id) ?? ''));
  }

  async endEmissions(ends: readonly EmissionEnding[]): Promise<EndsRecorded> {
    if (ends.length === 0) return { recorded: [], alreadyEnded: [], unknown: [], applied: [] };
    const outcomes = await this.writer.write(
      ends.map(({ event, end, expiresAt, endedBy, listedUnder }) => ({
        kind: 'update',
        id: event.id,
        set: {
          state: end.state,
          [end.state === 'emitted' ? 'emittedAt' : 'failedAt']: end.at,
          reason: end.state === 'failed' ? end.reason : undefined,
          [TABLE.ttlAttribute]: expiresAt,
          endedBy,
          // A failed event is listed whatever the setting (see tenantIndexKeyAt).
          [TABLE.tenantShardKey]: listedUnder,
        },
        condition: { op: 'and', conditions: [is('state', EVENT_STATE.queued), is('version', event.version)] },
      })),
    );
    const applied = ends.filter((_, index) => outcomes[index] === 'applied');
    const refused = ends.filter((_, index) => outcomes[index] === 'refused');
    // A refused end may be this delivery's own, applied by an attempt whose answer was lost.
    const current = await this.read(refused.map(({ event }) => event.id));
    const own = refused.filter(({ event, endedBy }) => current.get(event.id)?.endedBy === endedBy);
    // Only ends known to be applied here free a place (an own end found later may have freed it
    // already): a count errs high, never low.
    return {
      recorded: [...applied, ...own],
      alreadyEnded: refused.filter((ending) => !own.includes(ending)),
      unknown: ends.filter((_, index) => outcomes[index] === 'unknown'),
      applied,
    };
  }

  async releasePlaces(freed: ReadonlyMap<string, number>): Promise<readonly Unreleased[]> {
    const released = await Promise.allSettled([...freed].map(([tenant, count]) => this.counters.releaseOpenEvents(tenant, count)));
    return [...freed].flatMap(([tenant, count], index) => (released[index]?.status === 'rejected' ? [{ tenant, count }] : []));
  }

  countEnds(increments: readonly EndCountIncrement[]): Promise<void> {
    return this.endCounters.add(increments);
  }

  async cancel(
    id: string,
    scope: ChangeScope,
    change: ChangeRequest & { readonly expiresAt: number },
  ): Promise<{ readonly outcome: 'cancelled' } | ChangeRefused> {
    const cancelled = await this.writeChange('TransactWriteItems', isCancelledTransaction, (now, abortSignal) =>
      this.client.send(
        withoutSdkRetries(
          // The record and its place in the quota change together: a retry can neither free it twice nor leave it taken.
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: this.tableName,
                  Key: { [TABLE.partitionKey]: id },
                  // Out of the held index (and the time-bucket index): no pass over held events reads it again.
                  UpdateExpression: 'SET #state = :cancelled, cancelledAt = :now, cancelledBy = :by, #ttl = :ttl REMOVE #bucketShard',
                  ConditionExpression: CHANGEABLE,
                  ExpressionAttributeNames: {
                    '#id': TABLE.partitionKey,
                    '#state': 'state',
                    '#due': TABLE.dueAtKey,
                    '#ttl': TABLE.ttlAttribute,
                    '#bucketShard': TABLE.bucketShardKey,
                  },
                  ExpressionAttributeValues: {
                    ...changeableValues(scope, now),
                    ':cancelled': EVENT_STATE.cancelled,
                    ':now': now,
                    ':by': change.by,
                    ':ttl': change.expiresAt,
                  },
                },
              },
              { Update: this.counters.releaseUpdate(scope.tenant, 1) },
            ],
          }),
        ),
        { abortSignal },
      ),
    );
    if (cancelled === undefined) return { outcome: 'refused', current: (await this.read([id])).get(id) };
    this.counters.freed(scope.tenant);
    return { outcome: 'cancelled' };
  }

  async reschedule(
    id: string,
    scope: ChangeScope,
    change: RescheduleChange,
  ): Promise<{ readonly outcome: 'rescheduled'; readonly event: ScheduledEvent | undefined } | ChangeRefused> {
    const rescheduled = await this.writeChange('UpdateItem', isConditionFailure, (now, abortSignal) =>
      this.client.send(withoutSdkRetries(new UpdateCommand(this.rescheduleUpdate(id, scope, change, now, 'table'))), { abortSignal }),
    );
    if (rescheduled !== undefined) {
      const old = toRecord(rescheduled.Attributes ?? {});
      // The payload item holds the expiry of the record at its latest, never less: it moves only when the record's moves past it.
      if (change.expiresAt > old.expiresAt) await this.keepPayloadUntil(old, change.expiresAt);
      await this.moveLabelEntries({ ...old, dueAt: change.dueAt, expiresAt: change.expiresAt }, change.placement.shard);
      // A payload kept apart is still the one written at ingest; the item was never rewritten.
      return {
        outcome: 'rescheduled',
        event: eventOf({ ...old, dueAt: change.dueAt, version: old.version + 1 }, await this.storedPayload(old)),
      };
    }
    let current = (await this.read([id])).get(id);
    // Its payload only in its delay-queue copy: the record says where the event moved, and the emitter carries the copy on.
    if (current?.payloadKept === 'queue') {
      const carried = await this.writeChange('UpdateItem', isConditionFailure, (now, abortSignal) =>
        this.client.send(withoutSdkRetries(new UpdateCommand(this.rescheduleUpdate(id, scope, change, now, 'queue'))), { abortSignal }),
      );
      if (carried !== undefined) {
        const old = toRecord(carried.Attributes ?? {});
        await this.moveLabelEntries({ ...old, dueAt: change.dueAt, expiresAt: change.expiresAt }, change.placement.shard);
        return { outcome: 'rescheduled', event: undefined };
      }
      current = (await this.read([id])).get(id);
    }
    // Delivered again, it cannot know whether its payload item's expiry and its label entries were moved (those writes may have failed).
    if (current?.lastChangeBy === change.by && isOpen(current.state)) {
      await this.keepPayloadUntil(current, current.expiresAt);
      await this.moveLabelEntries(current, change.placement.shard);
    }
    return { outcome: 'refused', current };
  }

  /**
   * A reschedule's write, for an event whose payload the table holds (placed anew), or one whose
   * payload only its delay-queue copy holds (left there: the record names that copy in
   * `carriedBy`, the first such reschedule's, so that later ones keep it).
   */
  private rescheduleUpdate(id: string, scope: ChangeScope, change: RescheduleChange, now: number, payloadIn: 'table' | 'queue') {
    const { placement } = change;
    const queued = placement.state === 'queued';
    const common = 'SET #due = :due, version = version + :one, rescheduledAt = :now, #ttl = :ttl, lastChangeBy = :by, lastChangeAt = :at';
    return {
      TableName: this.tableName,
      Key: { [TABLE.partitionKey]: id },
      UpdateExpression:
        payloadIn === 'queue'
          ? `${common}, carriedBy = if_not_exists(carriedBy, queuedBy)`
          : `${common}, #state = :state, #tenantShard = :tenantShard` +
            (queued ? ', queuedBy = :queuedBy REMOVE loadedBy, #bucketShard' : ' REMOVE loadedBy, queuedBy, #bucketShard'),
      ConditionExpression:
        CHANGEABLE +
        (payloadIn === 'queue'
          ? ' AND payloadKept = :queue AND attribute_exists(queuedBy)'
          : // Only a payload the table holds can be placed anew.
            ' AND (attribute_exists(payload) OR payloadKept = :apart)') +
        // Once per request, and never behind a reschedule the client published later.
        ` AND ${followsLastChangeCondition('lastChangeAt', 'lastChangeBy')}`,
      ExpressionAttributeNames: {
        '#id': TABLE.partitionKey,
        '#state': 'state',
        '#due': TABLE.dueAtKey,
        '#ttl': TABLE.ttlAttribute,
        ...(payloadIn === 'table' ? { '#bucketShard': TABLE.bucketShardKey, '#tenantShard': TABLE.tenantShardKey } : {}),
      },
      ExpressionAttributeValues: {
        ...changeableValues(scope, now),
        ':due': change.dueAt,
        ':one': 1,
        ':now': now,
        ':ttl': change.expiresAt,
        ':by': change.by,
        ':at': change.publishedAt,
        ...(payloadIn === 'queue'
          ? { ':queue': 'queue' }
          : {
              ':apart': 'item',
              ':state': placement.state,
              // Its payload is stored: the loader finds it (and its sweep repairs it) under the tenant's stored family,
              // where the time-bucket index of a record written before the tenant index leaves it.
              ':tenantShard': tenantShardKey(scope.tenant, 's', placement.shard),
              ...(queued ? { ':queuedBy': change.queuedBy } : {}),
            }),
      },
      ReturnValues: 'ALL_OLD' as const,
    };
  }

  /** Gives a record's label entries its due time and expiry (a failure is retried with the reschedule's input message). */
  private async moveLabelEntries(record: EventRecord, shard: number): Promise<void> {
    if ((record.labels ?? []).length > 0) await batchPut(this.client, this.tableName, labelEntries(record, shard));
  }

  async hold(
    record: EventRecord,
    from: string,
    hold: { readonly payload: string; readonly heldKey: string; readonly tenantShard: string; readonly now: number },
  ): Promise<HoldOutcome> {
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: { [TABLE.partitionKey]: record.id },
                // The payload in the record, whatever its size (at most SNS's 256 KiB): no payload item outlives a held event without an expiry.
                UpdateExpression:
                  'SET #state = :held, heldAt = :now, payload = :payload, payloadKept = :inRecord, #bucketShard = :heldKey, ' +
                  // A near-path event indexed as queued keeps that key; one not indexed is listed from now on.
                  '#tenantShard = if_not_exists(#tenantShard, :tenantShard) ' +
                  'REMOVE queuedBy, loadedBy, #ttl',
                ConditionExpression: '#state = :queued AND version = :version AND queuedBy = :from',
                ExpressionAttributeNames: {
                  '#state': 'state',
                  '#bucketShard': TABLE.bucketShardKey,
                  '#tenantShard': TABLE.tenantShardKey,
                  '#ttl': TABLE.ttlAttribute,
                },
                ExpressionAttributeValues: {
                  ':held': EVENT_STATE.held,
                  ':now': hold.now,
                  ':payload': hold.payload,
                  ':inRecord': 'record',
                  ':heldKey': hold.heldKey,
                  ':tenantShard': hold.tenantShard,
                  ':queued': EVENT_STATE.queued,
                  ':version': record.version,
                  ':from': from,
                },
              },
            },
            {
              ConditionCheck: {
                TableName: this.tableName,
                Key: { [TABLE.partitionKey]: openEventsCounterId(record.tenant) },
                ConditionExpression: PAUSED_CONDITION,
              },
            },
          ],
        }),
      );
      return 'held';
    } catch (error) {
      const reasons = (error as { CancellationReasons?: { Code?: string }[] })?.CancellationReasons;
      if (reasons?.[0]?.Code === 'ConditionalCheckFailed') return 'changed';
      if (reasons?.[1]?.Code === 'ConditionalCheckFailed') return 'not-paused';
      throw transient('TransactWriteItems', error);
    }
  }

  async carry(record: EventRecord, from: string, onward: Carry, now: number): Promise<boolean> {
    const stored =
      onward.to === 'table'
        ? withStoredPayload({ ...record, state: EVENT_STATE.scheduled, carriedToTableAt: now }, onward.payload, record, record.expiresAt)
        : undefined;
    // Written before the record names it, as at ingest.
    if (stored?.payloadItem !== undefined) await batchPut(this.client, this.tableName, [stored.payloadItem]);
    const inline = stored?.record.payloadKept === 'record';
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: record.id },
          UpdateExpression:
            onward.to === 'queue'
              ? 'SET queuedBy = :queuedBy, carriedAt = :now REMOVE carriedBy'
              : `SET #state = :scheduled, carriedToTableAt = :now, #tenantShard = :tenantShard, payloadKept = :kept${inline ? ', payload = :payload' : ''} REMOVE carriedBy, queuedBy, #bucketShard`,
          ConditionExpression: '#state = :queued AND version = :version AND carriedBy = :from',
          ExpressionAttributeNames: {
            '#state': 'state',
            ...(onward.to === 'table' ? { '#tenantShard': TABLE.tenantShardKey, '#bucketShard': TABLE.bucketShardKey } : {}),
          },
          ExpressionAttributeValues: {
            ':queued': EVENT_STATE.queued,
            ':version': record.version,
            ':from': from,
            ':now': now,
            ...(onward.to === 'queue'
              ? { ':queuedBy': onward.queuedBy }
              : {
                  ':scheduled': EVENT_STATE.scheduled,
                  ':tenantShard': onward.tenantShard,
                  ':kept': stored?.record.payloadKept,
                  ...(inline ? { ':payload': onward.payload } : {}),
                }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw transient('UpdateItem', error);
    }
  }

  /**
   * Makes a record's payload item, if it has one, last until `expiresAt` (epoch seconds): a
   * reschedule that moves the record's expiry past it must not leave the event without its
   * payload when it falls due. The write is billed for the whole item, so it is made only when
   * the record's expiry moves later, and applies only when the item's is earlier.
   */
  private async keepPayloadUntil(record: EventRecord, expiresAt: number): Promise<void> {
    if (record.payloadKept !== 'item') return;
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: payloadItemId(record) },
          UpdateExpression: 'SET #ttl = :ttl',
          ConditionExpression: 'attribute_exists(#id) AND #ttl < :ttl',
          ExpressionAttributeNames: { '#id': TABLE.partitionKey, '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: { ':ttl': expiresAt },
        }),
      );
    } catch (error) {
      // Kept as long already (or gone, which no expiry brings back).
      if (isConditionFailure(error)) return;
      throw transient('UpdateItem', error);
    }
  }

  /**
   * Writes a cancel or a reschedule, whose condition holds the change cutoff as of the write:
   * each attempt checks it against the clock when it is made, goes out once (the SDK's retries
   * would resend the old cutoff) and is abandoned after `changeWriteTimeoutMs`, so that it lands,
   * if at all, before the emitter reads the record (see SchedulerConfig.changeCutoffSeconds). A
   * failed attempt is made again, with the cutoff evaluated anew. Undefined when refused.
   */
  private async writeChange<T>(
    operation: string,
    isRefusal: (error: unknown) => boolean,
    send: (now: number, abortSignal: AbortSignal) => Promise<T>,
  ): Promise<T | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(this.clock.now(), AbortSignal.timeout(this.changeWriteTimeoutMs));
      } catch (error) {
        if (isRefusal(error)) return undefined;
        if (attempt === CHANGE_WRITE_ATTEMPTS) throw transient(operation, error);
        await pauseBeforeRound(attempt);
      }
    }
  }
}

/** Whether a cancel's transaction was refused by its record's condition (not by a conflict, which a retry settles). */
function isCancelledTransaction(error: unknown): boolean {
  return (error as { CancellationReasons?: { Code?: string }[] })?.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
}

function changeableValues(scope: ChangeScope, now: number): Record<string, unknown> {
  return {
    ':tenant': scope.tenant,
    ':cutoff': now + scope.cutoffMs,
    ':scheduled': EVENT_STATE.scheduled,
    ':queued': EVENT_STATE.queued,
    ':held': EVENT_STATE.held,
  };
}
