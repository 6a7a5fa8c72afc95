import { GetCommand, UpdateCommand, paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { ScheduledEvent } from '../domain/event.js';
import { EVENT_STATE, type EventRecord } from '../domain/lifecycle.js';
import type {
  ChangeRefused,
  ChangeScope,
  CreateOutcome,
  DueEventRef,
  EmissionEnding,
  EndsRecorded,
  EventStore,
  NewEvent,
  NoticeClaim,
  Placement,
} from '../app/ports.js';
import { batchGet, batchPut, batchStatements, type Statement } from './dynamodb-batches.js';
import { isEventItem, newEventItems, payloadItemId, toEvent, toRecord } from './dynamodb-event-items.js';
import { DynamoDbQuotaCounters } from './dynamodb-quota-counters.js';
import { isConditionFailure, LOADER_CURSOR_ID, TABLE, transient } from './dynamodb-table.js';

/** Open, of this tenant, and due after the change cutoff: what cancel and reschedule require. */
const CHANGEABLE = 'attribute_exists(#id) AND tenant = :tenant AND #state IN (:scheduled, :queued) AND #due > :cutoff';

/** A PartiQL INSERT of a whole item: it fails (DuplicateItem) when the key exists. */
function insertStatement(tableName: string, item: Readonly<Record<string, unknown>>): Statement {
  const names = Object.keys(item).filter((name) => item[name] !== undefined);
  return {
    Statement: `INSERT INTO "${tableName}" VALUE {${names.map((name) => `'${name}': ?`).join(', ')}}`,
    Parameters: names.map((name) => item[name]),
  };
}

export class DynamoDbEventStore implements EventStore {
  private readonly counters: DynamoDbQuotaCounters;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.counters = new DynamoDbQuotaCounters(client, tableName);
  }

  async createMany(entries: readonly NewEvent[]): Promise<CreateOutcome[]> {
    const outcomes: (CreateOutcome | undefined)[] = entries.map(() => undefined);
    const [first] = entries;
    if (first === undefined) return [];
    const { tenant } = first.event;
    const { quotas, now } = first;
    // A repeated id in the batch waits for the one-by-one pass, to be found a duplicate there.
    const seen = new Set<string>();
    const together = entries.flatMap((entry, index) => (seen.has(entry.event.id) ? [] : (seen.add(entry.event.id), [index])));
    if (together.length > 1 && (await this.counters.reserve(tenant, quotas, now, together.length)) === undefined) {
      const created = await this.insert(together.map((index) => entries[index] as NewEvent));
      const duplicates = together.filter((_, position) => !created[position]);
      if (duplicates.length > 0) await this.counters.unreserve(tenant, now, duplicates.length);
      const existing = await this.read(duplicates.map((index) => (entries[index] as NewEvent).event.id));
      for (const index of together) outcomes[index] = { outcome: 'created' };
      for (const index of duplicates) outcomes[index] = { outcome: 'duplicate', existing: existing.get((entries[index] as NewEvent).event.id) };
    }
    // The quotas leave no room for all of them (or there is one): one by one, as many as fit.
    for (const [index, entry] of entries.entries()) outcomes[index] ??= await this.createOne(entry);
    return outcomes as CreateOutcome[];
  }

  private async createOne(entry: NewEvent): Promise<CreateOutcome> {
    const { event, quotas, now } = entry;
    const refused = await this.counters.reserve(event.tenant, quotas, now, 1);
    if (refused !== undefined) {
      // A redelivered request is never refused for a quota its event already counts in.
      const existing = (await this.read([event.id])).get(event.id);
      return existing === undefined ? { outcome: 'quota-exceeded', quota: refused } : { outcome: 'duplicate', existing };
    }
    const [created] = await this.insert([entry]);
    if (created) return { outcome: 'created' };
    await this.counters.unreserve(event.tenant, now, 1);
    return { outcome: 'duplicate', existing: (await this.read([event.id])).get(event.id) };
  }

  /**
   * Writes new events, 25 conditional inserts a request; false where the id is already known.
   * Payloads kept apart are written first, so a record never names a payload that is not there.
   */
  private async insert(entries: readonly NewEvent[]): Promise<boolean[]> {
    const items = entries.map((entry) => newEventItems(entry));
    const payloadItems = items.flatMap(({ payloadItem }) => (payloadItem ? [payloadItem] : []));
    if (payloadItems.length > 0) await batchPut(this.client, this.tableName, payloadItems);
    const outcomes = await batchStatements(
      this.client,
      items.map(({ record }) => insertStatement(this.tableName, record)),
    );
    return outcomes.map((outcome) => outcome === 'applied');
  }

  async requeue(id: string, inputMessageId: string, queuedBy: string, now: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: id },
          UpdateExpression: 'SET queuedBy = :queuedBy, queuedAt = :now',
          ConditionExpression: '#state = :queued AND version = :first AND inputMessageId = :input',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':queuedBy': queuedBy, ':now': now, ':queued': EVENT_STATE.queued, ':first': 1, ':input': inputMessageId },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw transient('UpdateItem', error);
    }
  }

  async *queryDue(bucketShard: string, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]> {
    if (untilMs <= fromMs) return;
    const pages = paginateQuery(
      { client: this.client, pageSize: 1000 },
      {
        TableName: this.tableName,
        IndexName: TABLE.dueIndex,
        KeyConditionExpression: '#bucket = :bucket AND #due BETWEEN :from AND :last',
        ExpressionAttributeNames: { '#bucket': TABLE.bucketShardKey, '#due': TABLE.dueAtKey },
        ExpressionAttributeValues: { ':bucket': bucketShard, ':from': fromMs, ':last': untilMs - 1 },
      },
    );
    try {
      for await (const page of pages) {
        yield (page.Items ?? []).map((item) => ({ id: String(item[TABLE.partitionKey]), dueAt: Number(item[TABLE.dueAtKey]) }));
      }
    } catch (error) {
      throw transient('Query', error);
    }
  }

  async read(ids: readonly string[]): Promise<ReadonlyMap<string, EventRecord>> {
    const items = await batchGet(this.client, this.tableName, ids);
    const records = new Map<string, EventRecord>();
    for (const [id, item] of items) if (isEventItem(item)) records.set(id, toRecord(item));
    return records;
  }

  async takeForLoading(
    ids: readonly string[],
    take: { readonly owner: string; readonly queuedBy: string; readonly now: number; readonly horizonMs: number },
  ): Promise<ScheduledEvent[]> {
    // The GSI is read eventually consistently; the records say what is still to load (reads are cheap, writes are not).
    const records = [...(await this.read(ids)).values()].filter(
      (record) =>
        record.dueAt < take.horizonMs &&
        (record.state === EVENT_STATE.scheduled || (record.state === EVENT_STATE.queued && record.loadedBy === take.owner)),
    );
    const outcomes = await batchStatements(
      this.client,
      records.map((record) => ({
        Statement:
          `UPDATE "${this.tableName}" SET "state" = ?, queuedAt = ?, queuedBy = ?, loadedBy = ? ` +
          `WHERE id = ? AND dueAt < ? AND (("state" = ? AND loadedBy IS MISSING) OR ("state" = ? AND loadedBy = ?))`,
        Parameters: [EVENT_STATE.queued, take.now, take.queuedBy, take.owner, record.id, take.horizonMs, EVENT_STATE.scheduled, EVENT_STATE.queued, take.owner],
      })),
    );
    const taken = records.filter((_, index) => outcomes[index] === 'applied');
    const apart = await batchGet(
      this.client,
      this.tableName,
      taken.filter((record) => record.payloadKept === 'item').map((record) => payloadItemId(record.id)),
    );
    return taken.map((record) => toEvent(record, record.payload ?? String(apart.get(payloadItemId(record.id))?.payload ?? '')));
  }

  async endEmissions(ends: readonly EmissionEnding[]): Promise<EndsRecorded> {
    if (ends.length === 0) return { recorded: [], alreadyEnded: [] };
    const outcomes = await batchStatements(
      this.client,
      ends.map(({ event, end, expiresAt }) => ({
        Statement:
          `UPDATE "${this.tableName}" SET "state" = ?, ${end.state === 'emitted' ? 'emittedAt' : 'failedAt'} = ?, expiresAt = ?` +
          `${end.state === 'failed' ? ', reason = ?' : ''} WHERE id = ? AND "state" = ? AND version = ?`,
        Parameters: [
          end.state,
          end.at,
          expiresAt,
          ...(end.state === 'failed' ? [end.reason] : []),
          event.id,
          EVENT_STATE.queued,
          event.version,
        ],
      })),
    );
    const recorded = ends.filter((_, index) => outcomes[index] === 'applied');
    const alreadyEnded = ends.filter((_, index) => outcomes[index] !== 'applied');
    const freed = new Map<string, number>();
    for (const { event } of recorded) freed.set(event.tenant, (freed.get(event.tenant) ?? 0) + 1);
    // One counter write per tenant for the whole batch.
    await Promise.all([...freed].map(([tenant, count]) => this.counters.releaseOpenEvents(tenant, count)));
    return { recorded, alreadyEnded };
  }

  async cancel(id: string, scope: ChangeScope, change: { readonly by: string; readonly expiresAt: number }): Promise<{ readonly outcome: 'cancelled' } | ChangeRefused> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: id },
          UpdateExpression: 'SET #state = :cancelled, cancelledAt = :now, cancelledBy = :by, #ttl = :ttl',
          ConditionExpression: CHANGEABLE,
          ExpressionAttributeNames: { '#id': TABLE.partitionKey, '#state': 'state', '#due': TABLE.dueAtKey, '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: { ...changeableValues(scope), ':cancelled': EVENT_STATE.cancelled, ':now': scope.now, ':by': change.by, ':ttl': change.expiresAt },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw transient('UpdateItem', error);
      return { outcome: 'refused', current: (await this.read([id])).get(id) };
    }
    await this.counters.releaseOpenEvents(scope.tenant, 1);
    return { outcome: 'cancelled' };
  }

  async reschedule(
    id: string,
    scope: ChangeScope,
    change: { readonly dueAt: number; readonly placement: Placement; readonly queuedBy: string; readonly expiresAt: number },
  ): Promise<{ readonly outcome: 'rescheduled'; readonly event: ScheduledEvent } | ChangeRefused> {
    const { placement } = change;
    const queued = placement.state === 'queued';
    let updated: Record<string, unknown> | undefined;
    try {
      ({ Attributes: updated } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: id },
          UpdateExpression:
            'SET #due = :due, version = version + :one, #state = :state, rescheduledAt = :now, #ttl = :ttl' +
            (queued ? ', queuedAt = :now, queuedBy = :queuedBy REMOVE #bucketShard, loadedBy' : ', #bucketShard = :bucketShard REMOVE loadedBy, queuedBy'),
          // Only a payload the table holds can be placed anew.
          ConditionExpression: `${CHANGEABLE} AND (attribute_exists(payload) OR payloadKept = :apart)`,
          ExpressionAttributeNames: {
            '#id': TABLE.partitionKey,
            '#state': 'state',
            '#due': TABLE.dueAtKey,
            '#bucketShard': TABLE.bucketShardKey,
            '#ttl': TABLE.ttlAttribute,
          },
          ExpressionAttributeValues: {
            ...changeableValues(scope),
            ':apart': 'item',
            ':due': change.dueAt,
            ':one': 1,
            ':state': placement.state,
            ':now': scope.now,
            ':ttl': change.expiresAt,
            ...(queued ? { ':queuedBy': change.queuedBy } : { ':bucketShard': placement.bucketShard }),
          },
          ReturnValues: 'ALL_NEW',
        }),
      ));
    } catch (error) {
      if (!isConditionFailure(error)) throw transient('UpdateItem', error);
      return { outcome: 'refused', current: (await this.read([id])).get(id) };
    }
    const record = toRecord(updated ?? {});
    // A payload kept apart is still the one written at ingest; the item was never rewritten.
    const payload = record.payload ?? String((await batchGet(this.client, this.tableName, [payloadItemId(id)])).get(payloadItemId(id))?.payload ?? '');
    return { outcome: 'rescheduled', event: toEvent(record, payload) };
  }

  async claimNotice(noticeId: string, claim: NoticeClaim, expiresAt: number): Promise<'claimed' | 'ended' | 'busy'> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: noticeId },
          UpdateExpression: 'SET emitClaim = :owner, emitClaimUntil = :until, #ttl = if_not_exists(#ttl, :ttl)',
          ConditionExpression:
            'attribute_not_exists(sentAt) AND (attribute_not_exists(emitClaimUntil) OR emitClaimUntil < :now OR emitClaim = :owner)',
          ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: { ':owner': claim.owner, ':until': claim.leaseUntil, ':now': claim.now, ':ttl': expiresAt },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'claimed';
    } catch (error) {
      if (isConditionFailure(error)) return (error as ConditionalCheckFailedException).Item?.sentAt ? 'ended' : 'busy';
      throw transient('UpdateItem', error);
    }
  }

  async releaseNotice(noticeId: string, owner: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: noticeId },
          UpdateExpression: 'REMOVE emitClaim, emitClaimUntil',
          ConditionExpression: 'emitClaim = :owner',
          ExpressionAttributeValues: { ':owner': owner },
        }),
      );
    } catch (error) {
      // Someone else's claim now, or gone: nothing of ours to release.
      if (isConditionFailure(error)) return;
      throw transient('UpdateItem', error);
    }
  }

  async markNoticeSent(noticeId: string, sentAt: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: noticeId },
          UpdateExpression: 'SET sentAt = :at',
          ExpressionAttributeValues: { ':at': sentAt },
        }),
      );
    } catch (error) {
      throw transient('UpdateItem', error);
    }
  }

  async readLoaderCursor(): Promise<number | undefined> {
    try {
      const { Item } = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { [TABLE.partitionKey]: LOADER_CURSOR_ID }, ConsistentRead: true }),
      );
      return typeof Item?.cursorMs === 'number' ? Item.cursorMs : undefined;
    } catch (error) {
      throw transient('GetItem', error);
    }
  }

  async advanceLoaderCursor(toMs: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: LOADER_CURSOR_ID },
          UpdateExpression: 'SET cursorMs = :to',
          ConditionExpression: 'attribute_not_exists(cursorMs) OR cursorMs < :to',
          ExpressionAttributeValues: { ':to': toMs },
        }),
      );
    } catch (error) {
      // A concurrent tick already moved it further: nothing to do.
      if (isConditionFailure(error)) return;
      throw transient('UpdateItem', error);
    }
  }
}

function changeableValues(scope: ChangeScope): Record<string, unknown> {
  return {
    ':tenant': scope.tenant,
    ':cutoff': scope.now + scope.cutoffMs,
    ':scheduled': EVENT_STATE.scheduled,
    ':queued': EVENT_STATE.queued,
  };
}
