import { GetCommand, UpdateCommand, paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { ScheduledEvent } from '../domain/event.js';
import { EVENT_STATE, type EventState } from '../domain/lifecycle.js';
import type { Quotas } from '../domain/tenants.js';
import type {
  ChangeRefused,
  CreateOutcome,
  DueEventRef,
  EmissionClaim,
  EmissionEnding,
  EventStore,
  NewEvent,
  Placement,
} from '../app/ports.js';
import {
  getRecord,
  ingestRateCounterId,
  isConditionFailure,
  LOADER_CURSOR_ID,
  openEventsCounterId,
  TABLE,
  tenantStateKey,
  toRecord,
  transactWrite,
  transient,
} from './dynamodb-table.js';

/** DynamoDB takes 100 items per transaction: the events' updates and their tenant's counter. */
const MAX_ENDS_PER_TRANSACTION = 99;

/** How long a per-second ingest counter is kept. */
const RATE_COUNTER_TTL_SECONDS = 3600;

/** Open, and held by no live emitter claim: what cancel and reschedule require. */
const CHANGEABLE =
  'attribute_exists(#id) AND tenant = :tenant AND #state IN (:scheduled, :queued) AND (attribute_not_exists(emitClaimUntil) OR emitClaimUntil < :now)';

/** A new event as the table holds it (also how load tests seed a backlog without the ingest path). */
export function newEventItem(entry: Pick<NewEvent, 'event' | 'clientId' | 'inputMessageId' | 'placement' | 'now' | 'expiresAt'>): Record<string, unknown> {
  const { event, placement, now } = entry;
  return {
    ...event,
    clientId: entry.clientId,
    inputMessageId: entry.inputMessageId,
    state: placement.state,
    [TABLE.tenantStateKey]: tenantStateKey(event.tenant, placement.state),
    createdAt: now,
    ...(placement.state === 'queued' ? { queuedAt: now } : { [TABLE.bucketShardKey]: placement.bucketShard }),
    [TABLE.ttlAttribute]: entry.expiresAt,
  };
}

export class DynamoDbEventStore implements EventStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async createMany(entries: readonly NewEvent[]): Promise<CreateOutcome[]> {
    const outcomes: (CreateOutcome | undefined)[] = entries.map(() => undefined);
    // One transaction cannot touch an item twice: a repeated id waits for the one-by-one pass.
    const seen = new Set<string>();
    let together = entries.flatMap((entry, index) => (seen.has(entry.event.id) ? [] : (seen.add(entry.event.id), [index])));
    const quotas = entries[0]?.quotas;
    // More at once than a quota allows can only be admitted one by one.
    while (together.length > 1 && quotas !== undefined && together.length <= Math.min(quotas.maxOpenEvents, quotas.maxIngestPerSecond)) {
      const failed = await this.admit(together.map((index) => entries[index] as NewEvent));
      if (failed.length === 0) {
        for (const index of together) outcomes[index] = { outcome: 'created' };
        break;
      }
      const duplicates = new Set(failed.filter((position) => position < together.length).map((position) => together[position] as number));
      // The quotas leave no room for all of them: admit one by one, as many as fit.
      if (duplicates.size === 0) break;
      for (const index of duplicates) outcomes[index] = await this.duplicate((entries[index] as NewEvent).event.id);
      together = together.filter((index) => !duplicates.has(index));
    }
    for (const [index, entry] of entries.entries()) outcomes[index] ??= await this.createOne(entry);
    return outcomes as CreateOutcome[];
  }

  private async createOne(entry: NewEvent): Promise<CreateOutcome> {
    const failed = await this.admit([entry]);
    if (failed.length === 0) return { outcome: 'created' };
    if (failed.includes(0)) return this.duplicate(entry.event.id);
    const quota: keyof Quotas = failed.includes(1) ? 'maxOpenEvents' : 'maxIngestPerSecond';
    return { outcome: 'quota-exceeded', quota };
  }

  private async duplicate(id: string): Promise<CreateOutcome> {
    return { outcome: 'duplicate', existing: await getRecord(this.client, this.tableName, id) };
  }

  /**
   * Puts new events of one tenant and counts them against its quotas in one transaction (the
   * counters are written once for the lot, which keeps a busy tenant's counter items cool).
   * Returns the positions whose condition failed: an event's own index when it already exists,
   * `entries.length` for the open-events quota, `entries.length + 1` for the ingest rate.
   */
  private admit(entries: readonly NewEvent[]): Promise<number[]> {
    const [first] = entries;
    if (first === undefined) return Promise.resolve([]);
    const { tenant } = first.event;
    const { quotas, now } = first;
    const second = Math.floor(now / 1000);
    const count = entries.length;
    return transactWrite(this.client, {
      TransactItems: [
        ...entries.map((entry) => ({
          Put: {
            TableName: this.tableName,
            Item: newEventItem(entry),
            ConditionExpression: 'attribute_not_exists(#id)',
            ExpressionAttributeNames: { '#id': TABLE.partitionKey },
          },
        })),
        {
          Update: {
            TableName: this.tableName,
            Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
            UpdateExpression: 'ADD openEvents :count',
            // A counter not yet written is zero; the caller never asks for more than the quota at once.
            ConditionExpression: 'attribute_not_exists(openEvents) OR openEvents <= :room',
            ExpressionAttributeValues: { ':count': count, ':room': quotas.maxOpenEvents - count },
          },
        },
        {
          Update: {
            TableName: this.tableName,
            Key: { [TABLE.partitionKey]: ingestRateCounterId(tenant, second) },
            UpdateExpression: 'ADD #count :count SET #ttl = :ttl',
            ConditionExpression: 'attribute_not_exists(#count) OR #count <= :room',
            ExpressionAttributeNames: { '#count': 'count', '#ttl': TABLE.ttlAttribute },
            ExpressionAttributeValues: { ':count': count, ':room': quotas.maxIngestPerSecond - count, ':ttl': second + RATE_COUNTER_TTL_SECONDS },
          },
        },
      ],
    });
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

  async takeForLoading(id: string, owner: string, now: number, horizonMs: number): Promise<ScheduledEvent | undefined> {
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: id },
          UpdateExpression: 'SET loadedBy = :owner, queuedAt = :now, #state = :queued',
          // The GSI is read eventually consistently: the item itself says whether it is still to load.
          ConditionExpression:
            'attribute_exists(#id) AND #due < :horizon AND ((#state = :scheduled AND attribute_not_exists(loadedBy)) OR (#state = :queued AND loadedBy = :owner))',
          ExpressionAttributeNames: { '#id': TABLE.partitionKey, '#state': 'state', '#due': TABLE.dueAtKey },
          ExpressionAttributeValues: {
            ':owner': owner,
            ':now': now,
            ':horizon': horizonMs,
            ':scheduled': EVENT_STATE.scheduled,
            ':queued': EVENT_STATE.queued,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes ? toRecord(Attributes) : undefined;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw transient('UpdateItem', error);
    }
  }

  async claimEmission(event: Pick<ScheduledEvent, 'id' | 'version'>, claim: EmissionClaim): Promise<'claimed' | 'ended' | 'stale' | 'busy'> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: event.id },
          UpdateExpression: 'SET emitClaim = :owner, emitClaimUntil = :until',
          ConditionExpression:
            '#state = :queued AND version = :version AND (attribute_not_exists(emitClaimUntil) OR emitClaimUntil < :now OR emitClaim = :owner)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':owner': claim.owner,
            ':until': claim.leaseUntil,
            ':now': claim.now,
            ':queued': EVENT_STATE.queued,
            ':version': event.version,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'claimed';
    } catch (error) {
      if (!isConditionFailure(error)) throw transient('UpdateItem', error);
      const current = (error as ConditionalCheckFailedException).Item as { state?: { S?: string }; version?: { N?: string } } | undefined;
      const state = current?.state?.S as EventState | undefined;
      if (state === EVENT_STATE.emitted || state === EVENT_STATE.failed) return 'ended';
      if (state === EVENT_STATE.queued && Number(current?.version?.N) === event.version) return 'busy';
      return 'stale';
    }
  }

  async releaseEmission(id: string, owner: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: id },
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

  async endEmissions(ends: readonly EmissionEnding[]): Promise<void> {
    const byTenant = new Map<string, EmissionEnding[]>();
    for (const ending of ends) byTenant.set(ending.event.tenant, [...(byTenant.get(ending.event.tenant) ?? []), ending]);
    for (const [tenant, endings] of byTenant) {
      for (let first = 0; first < endings.length; first += MAX_ENDS_PER_TRANSACTION) {
        await this.endTogether(tenant, endings.slice(first, first + MAX_ENDS_PER_TRANSACTION));
      }
    }
  }

  /** Ends events of one tenant and frees their places in one transaction; an event already ended is left out. */
  private async endTogether(tenant: string, endings: readonly EmissionEnding[]): Promise<void> {
    let pending = endings;
    while (pending.length > 0) {
      const failed = new Set(
        await transactWrite(this.client, {
          TransactItems: [...pending.map((ending) => this.endUpdate(ending)), this.releaseOpenEvents(tenant, pending.length)],
        }),
      );
      if (failed.size === 0) return;
      pending = pending.filter((_, position) => !failed.has(position));
    }
  }

  private endUpdate({ event, end, expiresAt }: EmissionEnding) {
    const at = end.state === 'emitted' ? 'emittedAt' : 'failedAt';
    return {
      Update: {
        TableName: this.tableName,
        Key: { [TABLE.partitionKey]: event.id },
        UpdateExpression: `SET #state = :state, #tenantState = :tenantState, ${at} = :at, #ttl = :ttl${end.state === 'failed' ? ', reason = :reason' : ''}`,
        // Only once: a second end of the same event leaves the count alone.
        ConditionExpression: '#state = :queued',
        ExpressionAttributeNames: { '#state': 'state', '#tenantState': TABLE.tenantStateKey, '#ttl': TABLE.ttlAttribute },
        ExpressionAttributeValues: {
          ':state': end.state,
          ':tenantState': tenantStateKey(event.tenant, end.state),
          ':at': end.at,
          ':ttl': expiresAt,
          ':queued': EVENT_STATE.queued,
          ...(end.state === 'failed' ? { ':reason': end.reason } : {}),
        },
      },
    };
  }

  async cancel(id: string, tenant: string, change: { readonly by: string; readonly now: number; readonly expiresAt: number }): Promise<{ readonly outcome: 'cancelled' } | ChangeRefused> {
    const failed = await transactWrite(this.client, {
      TransactItems: [
        {
          Update: {
            TableName: this.tableName,
            Key: { [TABLE.partitionKey]: id },
            UpdateExpression: 'SET #state = :cancelled, #tenantState = :tenantState, cancelledAt = :now, cancelledBy = :by, #ttl = :ttl',
            ConditionExpression: CHANGEABLE,
            ExpressionAttributeNames: { '#id': TABLE.partitionKey, '#state': 'state', '#tenantState': TABLE.tenantStateKey, '#ttl': TABLE.ttlAttribute },
            ExpressionAttributeValues: {
              ...changeableValues(tenant, change.now),
              ':cancelled': EVENT_STATE.cancelled,
              ':tenantState': tenantStateKey(tenant, EVENT_STATE.cancelled),
              ':by': change.by,
              ':ttl': change.expiresAt,
            },
          },
        },
        this.releaseOpenEvents(tenant, 1),
      ],
    });
    if (failed.length === 0) return { outcome: 'cancelled' };
    return { outcome: 'refused', current: await getRecord(this.client, this.tableName, id) };
  }

  async reschedule(
    id: string,
    tenant: string,
    change: { readonly dueAt: number; readonly placement: Placement; readonly now: number; readonly expiresAt: number },
  ): Promise<{ readonly outcome: 'rescheduled'; readonly event: ScheduledEvent } | ChangeRefused> {
    const { placement } = change;
    const queued = placement.state === 'queued';
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: id },
          UpdateExpression:
            'SET #due = :due, version = version + :one, #state = :state, rescheduledAt = :now, #ttl = :ttl' +
            (queued ? ', queuedAt = :now REMOVE #bucketShard, loadedBy' : ', #bucketShard = :bucketShard REMOVE loadedBy'),
          ConditionExpression: CHANGEABLE,
          ExpressionAttributeNames: {
            '#id': TABLE.partitionKey,
            '#state': 'state',
            '#due': TABLE.dueAtKey,
            '#bucketShard': TABLE.bucketShardKey,
            '#ttl': TABLE.ttlAttribute,
          },
          ExpressionAttributeValues: {
            ...changeableValues(tenant, change.now),
            ':due': change.dueAt,
            ':one': 1,
            ':state': placement.state,
            ':ttl': change.expiresAt,
            ...(placement.state === 'scheduled' ? { ':bucketShard': placement.bucketShard } : {}),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { outcome: 'rescheduled', event: toRecord(Attributes ?? {}) };
    } catch (error) {
      if (!isConditionFailure(error)) throw transient('UpdateItem', error);
      return { outcome: 'refused', current: await getRecord(this.client, this.tableName, id) };
    }
  }

  async claimNotice(noticeId: string, claim: EmissionClaim): Promise<'claimed' | 'ended' | 'busy'> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: noticeId },
          UpdateExpression: 'SET emitClaim = :owner, emitClaimUntil = :until, #ttl = if_not_exists(#ttl, :ttl)',
          ConditionExpression:
            'attribute_not_exists(sentAt) AND (attribute_not_exists(emitClaimUntil) OR emitClaimUntil < :now OR emitClaim = :owner)',
          ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: { ':owner': claim.owner, ':until': claim.leaseUntil, ':now': claim.now, ':ttl': claim.expiresAt },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'claimed';
    } catch (error) {
      if (isConditionFailure(error)) return (error as ConditionalCheckFailedException).Item?.sentAt ? 'ended' : 'busy';
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

  private releaseOpenEvents(tenant: string, count: number) {
    return {
      Update: {
        TableName: this.tableName,
        Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
        UpdateExpression: 'ADD openEvents :released',
        ExpressionAttributeValues: { ':released': -count },
      },
    };
  }
}

function changeableValues(tenant: string, now: number): Record<string, unknown> {
  return { ':tenant': tenant, ':now': now, ':scheduled': EVENT_STATE.scheduled, ':queued': EVENT_STATE.queued };
}
