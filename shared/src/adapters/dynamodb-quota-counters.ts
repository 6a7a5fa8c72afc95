import { DeleteCommand, GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type EventQuota, FullQuotas, fitting, NO_QUOTA_COUNTS, type QuotaAsk, type QuotaCounts } from '../domain/quotas.js';
import { TransientError } from '../domain/reasons.js';
import { openEventsCounterId } from '../domain/table-keys.js';
import type { Quotas } from '../domain/tenants.js';
import { batchGet } from './dynamodb-batches.js';
import { isConditionFailure, TABLE, transient } from './dynamodb-table.js';

const OPEN_EVENTS = 'openEvents';
/**
 * What one second admitted is counted in attributes named after it: new events in
 * `r<epoch second>`, control requests in `c<epoch second>`.
 */
const SECOND_ATTRIBUTE = /^[rc](\d+)$/;
const secondAttribute = (now: number): string => `r${Math.floor(now / 1000)}`;
const controlAttribute = (now: number): string => `c${Math.floor(now / 1000)}`;
const secondOf = (attribute: string): number => Number(SECOND_ATTRIBUTE.exec(attribute)?.[1] ?? Number.NaN);
/**
 * A second's count is dropped only this long after it: a batch taken at the start of a second
 * may still be admitted in it by a slower ingest function, and must find its count there.
 */
const SECONDS_KEPT = 10;

/**
 * The counts in a counter item (0 for what it does not hold yet), as either way it comes: the
 * document client's numbers, or DynamoDB's own notation (`{ N }`) in a refused write's error.
 */
function countsIn(item: Readonly<Record<string, unknown>> | undefined, now: number): QuotaCounts {
  const numberIn = (value: unknown): number =>
    Number((typeof value === 'object' && value !== null ? (value as { N?: string }).N : value) ?? 0);
  return {
    openEvents: numberIn(item?.[OPEN_EVENTS]),
    thisSecond: numberIn(item?.[secondAttribute(now)]),
    controlsThisSecond: numberIn(item?.[controlAttribute(now)]),
  };
}

/** Writes to take places while other ingest functions keep taking them, before giving up for now. */
const RESERVE_ROUNDS = 4;

/** How many places a reservation took (for the first ones asked for). */
export interface Reservation {
  readonly taken: number;
  /** The quota that stopped the rest, when fewer were taken than asked for. */
  readonly quota: EventQuota;
}

/** What `admit` took: places for the first `taken` new events, and for the first `controls` control requests. */
export interface Admission extends Reservation {
  readonly controls: number;
}

/**
 * A tenant's quota counters, all in one item (`#tenant#<id>`): its open events, its new events
 * in the current second, and its control requests in the current second. Taking places is one
 * conditional write per batch, for its new events and its control requests together (two when
 * only some fit), which DynamoDB applies one at a time, so concurrent ingest functions never
 * take more than a quota, and what one write takes is taken together or not at all. Each write
 * also drops the per-second counts of seconds long gone by that this process has seen, so the
 * item stays small.
 *
 * Counts err high, never low: a place is freed only when the write that ended its event is
 * known to have applied, so an answer lost on the way can leave a count too high (the tenant is
 * refused a little early) until `scripts/admin quota reconcile` recounts it.
 */
export class DynamoDbQuotaCounters {
  /** Per-second attributes seen on each tenant's item, to remove once their second is over. */
  private readonly seenSeconds = new Map<string, Set<string>>();
  /** Quotas this process found full, refused without a write for a short while. */
  private readonly full = new FullQuotas();

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Takes places for `count` new events (see `admit`). */
  async reserve(tenant: string, quotas: Quotas, now: number, count: number): Promise<Reservation> {
    const { taken, quota } = await this.admit(tenant, quotas, now, { events: count, controls: 0 });
    return { taken, quota };
  }

  /**
   * Takes places for new events (in both event quotas) and control requests (in the control
   * quota) in one write when they fit; else, by the counts the refused write returns, as many of
   * each as fit, in one more write (again only if other writers took places in between). A
   * quota this process found full a moment ago is not asked again (see FullQuotas): what it
   * would refuse is refused without a write, and only the rest is written.
   */
  async admit(tenant: string, quotas: Quotas, now: number, ask: QuotaAsk): Promise<Admission> {
    const fullQuota = this.full.at(tenant, now);
    // Never more than a quota at once: a second with no count yet would let any number through.
    let wanted = fitting(
      { events: fullQuota === undefined ? ask.events : 0, controls: this.full.controlsFullAt(tenant, now) ? 0 : ask.controls },
      NO_QUOTA_COUNTS,
      quotas,
    );
    let quota = fullQuota ?? wanted.quota;
    for (let round = 0; wanted.events + wanted.controls > 0; round++) {
      if (round === RESERVE_ROUNDS) throw new TransientError(`the quota counter of tenant "${tenant}" kept moving; retrying`);
      const refused = await this.take(tenant, quotas, now, wanted);
      if (refused === undefined) return { taken: wanted.events, quota, controls: wanted.controls };
      wanted = fitting(wanted, refused, quotas);
      if (fullQuota === undefined) quota = wanted.quota;
    }
    return { taken: 0, quota, controls: 0 };
  }

  /**
   * Takes places for `count` new events in one conditional write, all or none: false, with
   * nothing taken, when they do not all fit (or a quota this process found full a moment ago
   * has no room, without a write).
   */
  async reserveAll(tenant: string, quotas: Quotas, now: number, count: number): Promise<boolean> {
    if (count === 0) return true;
    const ask = { events: count, controls: 0 };
    if (this.full.at(tenant, now) !== undefined || fitting(ask, NO_QUOTA_COUNTS, quotas).events < count) return false;
    return (await this.take(tenant, quotas, now, ask)) === undefined;
  }

  /**
   * Gives back `unused` places taken at `heldAt` (by `reserveAll`) and frees `freed` places of
   * events that ended, in one write; none when both are 0.
   */
  async settle(tenant: string, heldAt: number, unused: number, freed: number): Promise<void> {
    if (unused + freed === 0) return;
    this.full.forget(tenant);
    await this.add(tenant, { [OPEN_EVENTS]: -(unused + freed), ...(unused > 0 ? { [secondAttribute(heldAt)]: -unused } : {}) });
  }

  /** One conditional write taking the places asked for; the counts that refused it, if it was refused. */
  private async take(tenant: string, quotas: Quotas, now: number, ask: QuotaAsk): Promise<QuotaCounts | undefined> {
    const current = secondAttribute(now);
    const stale = [...(this.seenSeconds.get(tenant) ?? [])].filter((name) => secondOf(name) < secondOf(current) - SECONDS_KEPT);
    const names: Record<string, string> = {};
    const values: Record<string, number> = {};
    const adds: string[] = [];
    const conditions: string[] = [];
    // Each count taken only where it is asked for: a write for control requests alone is not refused for full event quotas.
    const count = (name: string, attribute: string, value: number, room: number) => {
      names[name] = attribute;
      values[`:${name.slice(1)}Room`] = room - value;
      values[`:${name.slice(1)}Count`] = value;
      adds.push(`${name} :${name.slice(1)}Count`);
      conditions.push(`(attribute_not_exists(${name}) OR ${name} <= :${name.slice(1)}Room)`);
    };
    if (ask.events > 0) {
      count('#open', OPEN_EVENTS, ask.events, quotas.maxOpenEvents);
      count('#second', current, ask.events, quotas.maxIngestPerSecond);
    }
    if (ask.controls > 0) count('#control', controlAttribute(now), ask.controls, quotas.maxControlPerSecond);
    for (const [index, name] of stale.entries()) names[`#stale${index}`] = name;
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
          UpdateExpression: `ADD ${adds.join(', ')}${stale.length > 0 ? ` REMOVE ${stale.map((_, index) => `#stale${index}`).join(', ')}` : ''}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      this.remember(tenant, Attributes, stale);
      this.full.note(tenant, countsIn(Attributes, now), quotas, now);
      return undefined;
    } catch (error) {
      if (!isConditionFailure(error)) throw transient('UpdateItem', error);
      // The item as it was, in DynamoDB's own notation: the document client leaves errors as they come.
      const old = (error as ConditionalCheckFailedException).Item;
      this.remember(tenant, old, []);
      const counts = countsIn(old, now);
      this.full.note(tenant, counts, quotas, now);
      return counts;
    }
  }

  /** Gives back places taken by `reserve` at `now` for events that turned out to exist already. */
  async unreserve(tenant: string, now: number, count: number): Promise<void> {
    this.full.forget(tenant);
    await this.add(tenant, { [OPEN_EVENTS]: -count, [secondAttribute(now)]: -count });
  }

  /** Frees the places of events that ended (emitted, failed or cancelled). */
  async releaseOpenEvents(tenant: string, count: number): Promise<void> {
    this.full.forget(tenant);
    await this.add(tenant, { [OPEN_EVENTS]: -count });
  }

  /**
   * The update that frees `count` places, for a transaction that frees them with the write that
   * ends their events (a cancel's); call `freed` once it has applied.
   */
  releaseUpdate(tenant: string, count: number) {
    return {
      TableName: this.tableName,
      Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
      UpdateExpression: `ADD ${OPEN_EVENTS} :freed`,
      ExpressionAttributeValues: { ':freed': -count },
    };
  }

  /** Takes note that places of a tenant's were freed by a transaction (see releaseUpdate): its open events may no longer be full. */
  freed(tenant: string): void {
    this.full.forget(tenant);
  }

  /** Corrects the open-events count by `delta` (a recount's finding). */
  async correctOpenEvents(tenant: string, delta: number): Promise<void> {
    await this.add(tenant, { [OPEN_EVENTS]: delta });
  }

  /**
   * Deletes the tenant's counters item, its pauses with it (see DynamoDbTenantPauses): a tenant
   * removed with no open event leaves no count, pause or mark to whoever is given its id.
   */
  async forget(tenant: string): Promise<void> {
    try {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) } }));
    } catch (error) {
      throw transient('DeleteItem', error);
    }
  }

  /** The open-events count as the counter holds it (0 before the tenant's first event). */
  async openEvents(tenant: string): Promise<number> {
    try {
      const { Item } = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) }, ConsistentRead: true }),
      );
      return Number(Item?.[OPEN_EVENTS] ?? 0);
    } catch (error) {
      throw transient('GetItem', error);
    }
  }

  /** The open-events counts of these tenants, in their order: one BatchGetItem per 100 of them, not a read each. */
  async openEventsOf(tenants: readonly string[]): Promise<number[]> {
    const items = await batchGet(this.client, this.tableName, tenants.map(openEventsCounterId));
    return tenants.map((tenant) => Number(items.get(openEventsCounterId(tenant))?.[OPEN_EVENTS] ?? 0));
  }

  private remember(tenant: string, item: Readonly<Record<string, unknown>> | undefined, removed: readonly string[]): void {
    const seen = this.seenSeconds.get(tenant) ?? new Set<string>();
    for (const name of removed) seen.delete(name);
    for (const name of Object.keys(item ?? {})) if (SECOND_ATTRIBUTE.test(name)) seen.add(name);
    this.seenSeconds.set(tenant, seen);
  }

  private async add(tenant: string, deltas: Readonly<Record<string, number>>): Promise<void> {
    const entries = Object.entries(deltas);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
          UpdateExpression: `ADD ${entries.map((_, index) => `#c${index} :c${index}`).join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(entries.map(([name], index) => [`#c${index}`, name])),
          ExpressionAttributeValues: Object.fromEntries(entries.map(([, delta], index) => [`:c${index}`, delta])),
        }),
      );
    } catch (error) {
      throw transient('UpdateItem', error);
    }
  }
}
