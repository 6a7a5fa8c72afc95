import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Pause, PauseAuthor, PauseMark, PauseOwner, ResumeOutcome, TenantPauses } from '../app/ports/tenants.js';
import { openEventsCounterId, PAUSE_MARKS_KEY, tenantOfCounterId } from '../domain/table-keys.js';
import { batchGet } from './dynamodb-batches.js';
import { DynamoDbDueIndex } from './dynamodb-due-index.js';
import { followsLastChangeCondition } from './dynamodb-conditional-writes.js';
import { isConditionFailure, TABLE, transient } from './dynamodb-table.js';

/** Each owner's pause, in attributes of its own, so that one owner's resume never ends the other's. */
const SLOTS: Readonly<Record<PauseOwner, { readonly at: string; readonly note: string; readonly by: string }>> = {
  tenant: { at: 'pausedAt', note: 'pauseNote', by: 'pausedBy' },
  operator: { at: 'operatorPausedAt', note: 'operatorPauseNote', by: 'operatorPausedBy' },
};

/** The last pause or resume the tenant's requests applied, for their publish order. */
const LAST_CHANGE = { at: 'pauseChangeAt', by: 'pauseChangeBy' } as const;

/** The attributes that say a tenant is paused, one per owner. */
export const PAUSED_AT_ATTRIBUTES = [SLOTS.tenant.at, SLOTS.operator.at] as const;

/** The condition, on a tenant's counters item, that it is paused by anyone: what the emitter's hold checks. */
export const PAUSED_CONDITION = `attribute_exists(${SLOTS.tenant.at}) OR attribute_exists(${SLOTS.operator.at})`;

/**
 * Tenants' pauses, on their quota counters' items (`#tenant#<id>`): the tenant's own
 * (`pausedAt`, `pauseNote`, `pausedBy`), and its operator's (`operatorPausedAt`, …). The
 * emitter's hold checks PAUSED_CONDITION in the same transaction that holds an event, so that no
 * event is held once a resume has ended the pause. The tenant's requests apply in the order its
 * client published them (`pauseChangeAt`, `pauseChangeBy`: the rule reschedules follow). A pause
 * also lists the item in the tenant index under PAUSE_MARKS_KEY, at the time of its last pause or
 * resume, until the loader's sweep clears it: so the sweep reads the held events of the tenants
 * paused lately, not of every tenant registered.
 */
export class DynamoDbTenantPauses implements TenantPauses {
  /** The marks are one partition of the tenant index, read as the loader reads a tenant's. */
  private readonly index: DynamoDbDueIndex;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.index = new DynamoDbDueIndex(client, tableName);
  }

  async pause(
    tenant: string,
    author: PauseAuthor,
    pause: { readonly pausedAt: number; readonly note: string | undefined },
  ): Promise<boolean> {
    const slot = SLOTS[author.owner];
    const ordered = orderedBy(author);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
          UpdateExpression:
            `SET ${[`${slot.at} = if_not_exists(${slot.at}, :pausedAt)`, `${slot.by} = :pausedBy`, ...MARK.sets, ...ordered.sets].join(', ')}` +
            (pause.note === undefined ? ` REMOVE ${slot.note}` : `, ${slot.note} = :note`),
          ...ordered.condition,
          ExpressionAttributeNames: MARK.names,
          ExpressionAttributeValues: {
            ':pausedAt': pause.pausedAt,
            ':marks': PAUSE_MARKS_KEY,
            ':stamp': pause.pausedAt,
            ':pausedBy': author.owner === 'tenant' ? author.request.by : author.name,
            ...(pause.note === undefined ? {} : { ':note': pause.note }),
            ...ordered.values,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw transient('UpdateItem', error);
    }
  }

  async resume(tenant: string, author: PauseAuthor, now: number): Promise<ResumeOutcome> {
    const slot = SLOTS[author.owner];
    const other: PauseOwner = author.owner === 'tenant' ? 'operator' : 'tenant';
    const ordered = orderedBy(author);
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
          // The mark's time moves on: the sweep keeps the tenant a while after its resume (see clearPauseMark).
          UpdateExpression: `SET ${['#stamp = :stamp', ...ordered.sets].join(', ')} REMOVE ${slot.at}, ${slot.note}, ${slot.by}`,
          ...ordered.condition,
          ExpressionAttributeNames: { '#stamp': TABLE.dueAtKey },
          ExpressionAttributeValues: { ':stamp': now, ...ordered.values },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return { applied: true, ended: pauseIn(Attributes, author.owner), stillPaused: pauseIn(Attributes, other) };
    } catch (error) {
      if (!isConditionFailure(error) || author.owner !== 'tenant') throw transient('UpdateItem', error);
      // Not applied now: this very resume, delivered again, applied before (and is done again by its caller), or a later request did.
      const id = openEventsCounterId(tenant);
      // BatchGetItem (consistent), which ingest's role has, as it reads records back.
      const item = (await batchGet(this.client, this.tableName, [id])).get(id);
      return { applied: item?.[LAST_CHANGE.by] === author.request.by, ended: undefined, stillPaused: pauseIn(item, other) };
    }
  }

  async paused(tenants: readonly string[]): Promise<ReadonlyMap<string, Pause>> {
    const items = await batchGet(this.client, this.tableName, [...new Set(tenants)].map(openEventsCounterId));
    const pauses = new Map<string, Pause>();
    for (const tenant of tenants) {
      const item = items.get(openEventsCounterId(tenant));
      const pause = pauseIn(item, 'operator') ?? pauseIn(item, 'tenant');
      if (pause !== undefined) pauses.set(tenant, pause);
    }
    return pauses;
  }

  async lastChange(tenant: string): Promise<string | undefined> {
    const id = openEventsCounterId(tenant);
    const by = (await batchGet(this.client, this.tableName, [id])).get(id)?.[LAST_CHANGE.by];
    return typeof by === 'string' ? by : undefined;
  }

  async pauseMarks(): Promise<readonly PauseMark[]> {
    const marks: PauseMark[] = [];
    // Every mark, whenever stamped.
    for await (const page of this.index.query(PAUSE_MARKS_KEY, 0, Number.MAX_SAFE_INTEGER))
      for (const { id, dueAt } of page) marks.push({ tenant: tenantOfCounterId(id), stamp: dueAt });
    return marks;
  }

  /**
   * Marks a tenant as a pause does, unless it is marked already: for events held, or a pause
   * made, before marks were kept (see DueDirectoryBackfill, migrateIndexEntries).
   */
  async mark(tenant: string, now: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
          UpdateExpression: 'SET #marks = :marks, #stamp = :now',
          ConditionExpression: 'attribute_not_exists(#marks)',
          ExpressionAttributeNames: MARK.names,
          ExpressionAttributeValues: { ':marks': PAUSE_MARKS_KEY, ':now': now },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) return;
      throw transient('UpdateItem', error);
    }
  }

  async clearPauseMark(mark: PauseMark): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: openEventsCounterId(mark.tenant) },
          UpdateExpression: 'REMOVE #marks',
          ConditionExpression: `#stamp = :stamp AND NOT (${PAUSED_CONDITION})`,
          ExpressionAttributeNames: { '#marks': TABLE.tenantShardKey, '#stamp': TABLE.dueAtKey },
          ExpressionAttributeValues: { ':stamp': mark.stamp },
        }),
      );
    } catch (error) {
      // Paused, resumed or cleared since it was read: the next sweep decides anew.
      if (isConditionFailure(error)) return;
      throw transient('UpdateItem', error);
    }
  }
}

/** What a pause sets on the counters item to mark its tenant (see PAUSE_MARKS_KEY). */
const MARK = {
  sets: ['#marks = :marks', '#stamp = :stamp'],
  names: { '#marks': TABLE.tenantShardKey, '#stamp': TABLE.dueAtKey },
} as const;

/** A tenant's request records its place in the publish order, and applies only after the last one; an operator's applies as it comes. */
function orderedBy(author: PauseAuthor) {
  if (author.owner === 'operator') return { sets: [], condition: {}, values: {} };
  return {
    sets: [`${LAST_CHANGE.at} = :at`, `${LAST_CHANGE.by} = :by`],
    condition: { ConditionExpression: followsLastChangeCondition(LAST_CHANGE.at, LAST_CHANGE.by) },
    values: { ':at': author.request.publishedAt, ':by': author.request.by },
  };
}

function pauseIn(item: Readonly<Record<string, unknown>> | undefined, owner: PauseOwner): Pause | undefined {
  const slot = SLOTS[owner];
  const pausedAt = item?.[slot.at];
  if (typeof pausedAt !== 'number') return undefined;
  const note = item?.[slot.note];
  return { pausedAt, note: typeof note === 'string' ? note : undefined, pausedBy: String(item?.[slot.by] ?? ''), owner };
}
