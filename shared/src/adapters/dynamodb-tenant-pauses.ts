import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Pause, PauseAuthor, PauseOwner, ResumeOutcome, TenantPauses } from '../app/ports/tenants.js';
import { openEventsCounterId } from '../domain/table-keys.js';
import { batchGet } from './dynamodb-batches.js';
import { followsLastChangeCondition } from './dynamodb-conditional-writes.js';
import { isConditionFailure, TABLE, transient } from './dynamodb-table.js';

/** Each owner's pause, in attributes of its own, so that one owner's resume never ends the other's. */
const SLOTS: Readonly<Record<PauseOwner, { readonly at: string; readonly note: string; readonly by: string }>> = {
  tenant: { at: 'pausedAt', note: 'pauseNote', by: 'pausedBy' },
  operator: { at: 'operatorPausedAt', note: 'operatorPauseNote', by: 'operatorPausedBy' },
};

/** The last pause or resume the tenant's requests applied, for their publish order. */
const LAST_CHANGE = { at: 'pauseChangeAt', by: 'pauseChangeBy' } as const;

/** The condition, on a tenant's counters item, that it is paused by anyone: what the emitter's hold checks. */
export const PAUSED_CONDITION = `attribute_exists(${SLOTS.tenant.at}) OR attribute_exists(${SLOTS.operator.at})`;

/**
 * Tenants' pauses, on their quota counters' items (`#tenant#<id>`): the tenant's own
 * (`pausedAt`, `pauseNote`, `pausedBy`), and its operator's (`operatorPausedAt`, …). The
 * emitter's hold checks PAUSED_CONDITION in the same transaction that holds an event, so that no
 * event is held once a resume has ended the pause. The tenant's requests apply in the order its
 * client published them (`pauseChangeAt`, `pauseChangeBy`: the rule reschedules follow).
 */
export class DynamoDbTenantPauses implements TenantPauses {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

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
            `SET ${[`${slot.at} = if_not_exists(${slot.at}, :pausedAt)`, `${slot.by} = :pausedBy`, ...ordered.sets].join(', ')}` +
            (pause.note === undefined ? ` REMOVE ${slot.note}` : `, ${slot.note} = :note`),
          ...ordered.condition,
          ExpressionAttributeValues: {
            ':pausedAt': pause.pausedAt,
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

  async resume(tenant: string, author: PauseAuthor): Promise<ResumeOutcome> {
    const slot = SLOTS[author.owner];
    const other: PauseOwner = author.owner === 'tenant' ? 'operator' : 'tenant';
    const ordered = orderedBy(author);
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
          UpdateExpression: `${ordered.sets.length > 0 ? `SET ${ordered.sets.join(', ')} ` : ''}REMOVE ${slot.at}, ${slot.note}, ${slot.by}`,
          ...ordered.condition,
          ...(ordered.sets.length > 0 ? { ExpressionAttributeValues: ordered.values } : {}),
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
}

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
