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
  EmissionEnd,
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

  async create(entry: NewEvent): Promise<CreateOutcome> {
    const { event, now } = entry;
    const second = Math.floor(now / 1000);
    const failed = await transactWrite(this.client, {
      TransactItems: [
        {
          Put: {
            TableName: this.tableName,
            Item: newEventItem(entry),
            ConditionExpression: 'attribute_not_exists(#id)',
            ExpressionAttributeNames: { '#id': TABLE.partitionKey },
          },
        },
        {
          Update: {
            TableName: this.tableName,
            Key: { [TABLE.partitionKey]: openEventsCounterId(event.tenant) },
            UpdateExpression: 'ADD openEvents :one',
            ConditionExpression: 'attribute_not_exists(openEvents) OR openEvents < :max',
            ExpressionAttributeValues: { ':one': 1, ':max': entry.quotas.maxOpenEvents },
          },
        },
        {
          Update: {
            TableName: this.tableName,
            Key: { [TABLE.partitionKey]: ingestRateCounterId(event.tenant, second) },
            UpdateExpression: 'ADD #count :one SET #ttl = :ttl',
            ConditionExpression: 'attribute_not_exists(#count) OR #count < :max',
            ExpressionAttributeNames: { '#count': 'count', '#ttl': TABLE.ttlAttribute },
            ExpressionAttributeValues: { ':one': 1, ':max': entry.quotas.maxIngestPerSecond, ':ttl': second + RATE_COUNTER_TTL_SECONDS },
          },
        },
      ],
    });
    if (failed.length === 0) return { outcome: 'created' };
    if (failed.includes(0)) return { outcome: 'duplicate', existing: await getRecord(this.client, this.tableName, event.id) };
    const quota: keyof Quotas = failed.includes(1) ? 'maxOpenEvents' : 'maxIngestPerSecond';
    return { outcome: 'quota-exceeded', quota };
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

  async endEmission(event: ScheduledEvent, end: EmissionEnd, expiresAt: number): Promise<void> {
    const at = end.state === 'emitted' ? 'emittedAt' : 'failedAt';
    await transactWrite(this.client, {
      TransactItems: [
        {
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
        },
        this.releaseOpenEvent(event.tenant),
      ],
    });
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
        this.releaseOpenEvent(tenant),
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

  private releaseOpenEvent(tenant: string) {
    return {
      Update: {
        TableName: this.tableName,
        Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
        UpdateExpression: 'ADD openEvents :minusOne',
        ExpressionAttributeValues: { ':minusOne': -1 },
      },
    };
  }
}

function changeableValues(tenant: string, now: number): Record<string, unknown> {
  return { ':tenant': tenant, ':now': now, ':scheduled': EVENT_STATE.scheduled, ':queued': EVENT_STATE.queued };
}
