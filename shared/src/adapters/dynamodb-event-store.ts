import { GetCommand, PutCommand, UpdateCommand, paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { ScheduledEvent } from '../domain/event.js';
import { EVENT_STATE, type EventState } from '../domain/lifecycle.js';
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
import { DynamoDbQuotaCounters } from './dynamodb-quota-counters.js';
import { getRecord, isConditionFailure, LOADER_CURSOR_ID, TABLE, tenantStateKey, toRecord, transient } from './dynamodb-table.js';

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
      const created = await Promise.all(together.map((index) => this.put(entries[index] as NewEvent)));
      const duplicates = together.filter((_, position) => !created[position]);
      if (duplicates.length > 0) await this.counters.unreserve(tenant, now, duplicates.length);
      for (const index of together) outcomes[index] = { outcome: 'created' };
      for (const index of duplicates) outcomes[index] = await this.duplicate((entries[index] as NewEvent).event.id);
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
      const existing = await getRecord(this.client, this.tableName, event.id);
      return existing === undefined ? { outcome: 'quota-exceeded', quota: refused } : { outcome: 'duplicate', existing };
    }
    if (await this.put(entry)) return { outcome: 'created' };
    await this.counters.unreserve(event.tenant, now, 1);
    return this.duplicate(event.id);
  }

  private async duplicate(id: string): Promise<CreateOutcome> {
    return { outcome: 'duplicate', existing: await getRecord(this.client, this.tableName, id) };
  }

  /** Writes a new event; false when its id is already known. */
  private async put(entry: NewEvent): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: newEventItem(entry),
          ConditionExpression: 'attribute_not_exists(#id)',
          ExpressionAttributeNames: { '#id': TABLE.partitionKey },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw transient('PutItem', error);
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
    const ended = await Promise.all(ends.map((ending) => this.endOne(ending)));
    const freed = new Map<string, number>();
    ends.forEach(({ event }, index) => {
      if (ended[index]) freed.set(event.tenant, (freed.get(event.tenant) ?? 0) + 1);
    });
    // One counter write per tenant for the whole batch.
    await Promise.all([...freed].map(([tenant, count]) => this.counters.releaseOpenEvents(tenant, count)));
  }

  /** Ends one claimed event; false when it had already ended (its place was freed then). */
  private async endOne(ending: EmissionEnding): Promise<boolean> {
    try {
      await this.client.send(new UpdateCommand(this.endUpdate(ending)));
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw transient('UpdateItem', error);
    }
  }

  private endUpdate({ event, end, expiresAt }: EmissionEnding) {
    const at = end.state === 'emitted' ? 'emittedAt' : 'failedAt';
    return {
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
    };
  }

  async cancel(id: string, tenant: string, change: { readonly by: string; readonly now: number; readonly expiresAt: number }): Promise<{ readonly outcome: 'cancelled' } | ChangeRefused> {
    try {
      await this.client.send(
        new UpdateCommand({
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
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw transient('UpdateItem', error);
      return { outcome: 'refused', current: await getRecord(this.client, this.tableName, id) };
    }
    await this.counters.releaseOpenEvents(tenant, 1);
    return { outcome: 'cancelled' };
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

  async claimNotice(noticeId: string, claim: EmissionClaim, expiresAt: number): Promise<'claimed' | 'ended' | 'busy'> {
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

function changeableValues(tenant: string, now: number): Record<string, unknown> {
  return { ':tenant': tenant, ':now': now, ':scheduled': EVENT_STATE.scheduled, ':queued': EVENT_STATE.queued };
}
