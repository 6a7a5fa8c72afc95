import { DuePartitionsMerge } from '../src/adapters/dynamodb-due-partitions.js';
import { systemClock } from '../src/adapters/system-clock.js';
import type { BulkCancelJobs, JobStep, LabelledEvents, LabelledEventsQuery } from '../src/app/ports/bulk-cancel.js';
import type {
  DueDirectory,
  DueDirectoryBackfill,
  DueDirectoryBackfillProgress,
  DueEntry,
  DueEventRef,
  DueIndex,
  LoaderCursor,
  LoaderCursors,
  LoaderProgress,
} from '../src/app/ports/due-index.js';
import type { NoticeMarks } from '../src/app/ports/emitter-records.js';
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
} from '../src/app/ports/event-store.js';
import type { EventListing, EventsPage, EventsQuery } from '../src/app/ports/listing.js';
import type { Clock } from '../src/app/ports/process.js';
import type {
  OpenEventsCensus,
  OpenEventsCounter,
  Pause,
  PauseAuthor,
  PauseMark,
  PauseOwner,
  ResumeOutcome,
  TenantPauses,
} from '../src/app/ports/tenants.js';
import {
  addCounts,
  JOB_CURSOR,
  NO_COUNTS,
  type BulkCancelJob,
  type JobPosition,
  type NewBulkCancelJob,
} from '../src/domain/bulk-cancel.js';
import type { EmissionEnding } from '../src/domain/emission.js';
import type { ScheduledEvent } from '../src/domain/event.js';
import type { Placement } from '../src/domain/placement.js';
import {
  EVENT_STATE,
  eventOf,
  followsLastChange,
  isOpen,
  type LastChange,
  OPEN_STATES,
  placedOnDelayQueueBy,
  type EventRecord,
} from '../src/domain/lifecycle.js';
import type { EndCountIncrement } from '../src/domain/end-counts.js';
import { DYNAMODB_WRITE_UNIT_BYTES } from '../src/domain/limits.js';
import { controlRoom, NO_QUOTA_COUNTS, quotaRoom } from '../src/domain/quotas.js';
import type { Quotas } from '../src/domain/tenants.js';
import { itemBytes } from '../src/adapters/dynamodb-event-item-codec.js';
import { dueDirectoryPeriodOf, dueDirectoryPeriodsBetween, storedOrHeldPartition, tenantShardKey } from '../src/domain/table-keys.js';
import { SERIES_STATE, type SeriesRecord } from '../src/domain/series.js';
import { compareByDue, decodePageToken, encodePageToken, isAfter, tenantIndexKeyAt } from '../src/domain/tenant-index.js';

/**
 * The table in memory, one fake for each port the adapters implement over it, with the adapters'
 * semantics: the unit tests of every stage share them, and can inspect or seed them.
 */

/** A record as the table holds it: with its key in the tenant index, or (written before it) in the time-bucket index. */
export type StoredRecord = EventRecord & { readonly tenantShard?: string | undefined };

/** A held record's stored partition, of the same shard (`<tenant>#h<n>` → `<tenant>#s<n>`), as the table's writes move it; other keys stay. */
function unheldKey(record: StoredRecord): string | undefined {
  return record.state === EVENT_STATE.held ? record.tenantShard?.replace(/#h(\d+)$/, '#s$1') : record.tenantShard;
}

/** An end write held until the test answers it (see MemoryEventStore.holdEndWrites). */
export interface HeldEndWrite {
  readonly ends: readonly EmissionEnding[];
  answer(as?: Partial<EndsRecorded>): void;
  fail(error: Error): void;
}

/** The event store: conditional creates, takes, ends, changes and quotas. */
export class MemoryEventStore implements EventStore {
  readonly records = new Map<string, StoredRecord>();
  readonly payloads = new Map<string, string>();
  readonly openEvents = new Map<string, number>();
  /** Each tenant's new events by second (`<tenant>#<second>`), as its counter item keeps them. */
  readonly ingested = new Map<string, number>();
  /** Each tenant's control requests by second (`<tenant>#<second>`), as its counter item keeps them. */
  readonly controls = new Map<string, number>();
  /** Tenants' own pauses, on their counters' items as in the table (see MemoryTenantPauses). */
  readonly pauses = new Map<string, Pause>();
  /** Their operators' pauses, kept apart from theirs. */
  readonly operatorPauses = new Map<string, Pause>();
  /** The last pause or resume each tenant's requests applied. */
  readonly pauseChanges = new Map<string, LastChange>();
  /** Tenants marked by a pause, with the time of their last pause or resume (see TenantPauses.pauseMarks). */
  readonly pauseMarks = new Map<string, number>();
  private heldEndWrites: HeldEndWrite[] | undefined;
  /** Cancels to refuse, the record left as it is: writes that lost a race with another change. */
  refuseCancels = 0;
  /** Requests the store served, by method: what a stage costs in store calls. */
  readonly calls: Record<string, number> = {};

  /** What a change's cutoff is checked against, as the adapter checks it when it writes. */
  constructor(private readonly clock: Clock = systemClock) {}

  private called(method: string): void {
    this.calls[method] = (this.calls[method] ?? 0) + 1;
  }

  /** Seeds a record (e.g. one in an older shape, or an event queued by another path). */
  put(record: StoredRecord, payload?: string): void {
    this.records.set(record.id, record);
    if (payload !== undefined) this.payloads.set(record.id, payload);
  }

  /**
   * As the adapter: the first entries the quotas leave room for are admitted, by their place in
   * the batch; one whose id exists is a duplicate wherever it stands, its place given back.
   */
  async createMany(entries: readonly NewEvent[], options: CreateOptions = {}): Promise<CreateOutcome[]> {
    this.called('createMany');
    const [first] = entries;
    if (first === undefined) return [];
    if (options.placesHeld === true) {
      // Their places were held ahead: none taken, none given back (the holder counts a duplicate's as unused).
      return entries.map((entry): CreateOutcome => {
        const existing = this.records.get(entry.event.id);
        if (existing !== undefined) return { outcome: 'duplicate', existing };
        this.insert(entry);
        return { outcome: 'created' };
      });
    }
    const { tenant } = first.event;
    const second = `${tenant}#${Math.floor(first.now / 1000)}`;
    const counts = () => ({ ...NO_QUOTA_COUNTS, openEvents: this.openEvents.get(tenant) ?? 0, thisSecond: this.ingested.get(second) ?? 0 });
    const { room, quota } = quotaRoom(counts(), first.quotas);
    // A repeated id takes no place of its own: the adapter writes it in a later pass, which finds it.
    const seen = new Set<string>();
    return entries.map((entry): CreateOutcome => {
      const firstSeen = !seen.has(entry.event.id);
      const admitted = firstSeen && seen.add(entry.event.id).size <= room;
      const existing = this.records.get(entry.event.id);
      if (existing !== undefined) return { outcome: 'duplicate', existing };
      if (!admitted) return { outcome: 'quota-exceeded', quota };
      const { openEvents, thisSecond } = counts();
      this.openEvents.set(tenant, openEvents + 1);
      this.ingested.set(second, thisSecond + 1);
      this.insert(entry);
      return { outcome: 'created' };
    });
  }

  /** As the adapter: all the places in one write, or none. */
  async holdPlaces(tenant: string, quotas: Quotas, now: number, count: number): Promise<boolean> {
    this.called('holdPlaces');
    if (count === 0) return true;
    const second = `${tenant}#${Math.floor(now / 1000)}`;
    const counts = { ...NO_QUOTA_COUNTS, openEvents: this.openEvents.get(tenant) ?? 0, thisSecond: this.ingested.get(second) ?? 0 };
    if (quotaRoom(counts, quotas).room < count) return false;
    this.openEvents.set(tenant, counts.openEvents + count);
    this.ingested.set(second, counts.thisSecond + count);
    return true;
  }

  /** As the adapter: the unused places given back to their second too, the freed ones to the open events only. */
  async settlePlaces(tenant: string, settled: PlacesSettled): Promise<boolean> {
    this.called('settlePlaces');
    const second = `${tenant}#${Math.floor(settled.heldAt / 1000)}`;
    this.openEvents.set(tenant, (this.openEvents.get(tenant) ?? 0) - settled.unused - settled.freed);
    if (settled.unused > 0) this.ingested.set(second, (this.ingested.get(second) ?? 0) - settled.unused);
    return true;
  }

  /**
   * As the adapter: the first control requests the tenant's control quota leaves room for are
   * taken, whatever its events' quotas say; its events are created as createMany creates them.
   */
  async admit(admission: TenantAdmission): Promise<Admitted> {
    this.called('admit');
    const second = `${admission.tenant}#${Math.floor(admission.now / 1000)}`;
    const used = this.controls.get(second) ?? 0;
    const taken = Math.min(admission.controls, controlRoom({ ...NO_QUOTA_COUNTS, controlsThisSecond: used }, admission.quotas));
    this.controls.set(second, used + taken);
    const outcomes = admission.entries.length === 0 ? [] : await this.createMany(admission.entries);
    return { outcomes, controls: taken };
  }

  private insert(entry: NewEvent): void {
    const { event, placement } = entry;
    const { payload, ...rest } = event;
    const queued = placement.state === EVENT_STATE.queued;
    const record: StoredRecord = {
      ...rest,
      state: placement.state,
      payloadKept: 'queue',
      clientId: entry.clientId,
      inputMessageId: entry.inputMessageId,
      requestHash: entry.requestHash,
      queuedBy: entry.queuedBy,
      createdAt: entry.now,
      createdBy: entry.createdBy,
      queuedAt: queued ? entry.now : undefined,
      // As the DynamoDB store keys it with SCHEDULER_INDEX_QUEUED_EVENTS on, the default.
      tenantShard: tenantIndexKeyAt(
        'created',
        { tenant: event.tenant, shard: placement.shard, payloadIn: queued ? 'queue' : 'table', occurrence: event.series !== undefined },
        true,
      ),
      expiresAt: entry.expiresAt,
    };
    this.records.set(event.id, queued ? record : this.withStored(record, payload));
  }

  /** A record with its payload stored as the adapter stores it: in the record when the whole fits one write unit, else apart. */
  private withStored(record: StoredRecord, payload: string): StoredRecord {
    const inline: StoredRecord = { ...record, payloadKept: 'record', payload };
    if (itemBytes({ ...inline }) <= DYNAMODB_WRITE_UNIT_BYTES) return inline;
    this.payloads.set(record.id, payload);
    return { ...record, payloadKept: 'item', payload: undefined };
  }

  async requeue(id: string, requeue: Requeue): Promise<boolean> {
    this.called('requeue');
    const record = this.records.get(id);
    if (record === undefined || record.version !== requeue.version || placedOnDelayQueueBy(record) !== requeue.placedBy) return false;
    this.records.set(id, { ...record, queuedBy: requeue.queuedBy, resentAt: requeue.now });
    return true;
  }

  async storedPayload(record: EventRecord): Promise<string> {
    return record.payload ?? this.payloads.get(record.id) ?? '';
  }

  async read(ids: readonly string[]): Promise<ReadonlyMap<string, EventRecord>> {
    this.called('read');
    return new Map(ids.flatMap((id) => (this.records.has(id) ? [[id, this.records.get(id) as EventRecord]] : [])));
  }

  async takeForLoading(ids: readonly string[], take: LoadingTake): Promise<ScheduledEvent[]> {
    this.called('takeForLoading');
    const taken: ScheduledEvent[] = [];
    for (const id of ids) {
      const record = this.records.get(id);
      if (record === undefined) continue;
      if (take.overdueBefore !== undefined) {
        if (
          !isOpen(record.state) ||
          record.state === EVENT_STATE.held ||
          record.dueAt >= take.overdueBefore ||
          record.payloadKept === 'queue'
        )
          continue;
      } else if (take.resume !== undefined) {
        const again = record.state === EVENT_STATE.queued && record.loadedBy === take.owner;
        if (record.state !== EVENT_STATE.held && !again) continue;
        this.records.set(id, {
          ...record,
          state: EVENT_STATE.queued,
          resumedAt: take.now,
          queuedBy: take.queuedBy,
          loadedBy: take.owner,
          expiresAt: take.resume.expiresAt,
          tenantShard: unheldKey(record),
        });
        taken.push(this.withPayload(record));
        continue;
      } else {
        if (record.dueAt >= take.horizonMs) continue;
        const first = record.state === EVENT_STATE.scheduled && record.loadedBy === undefined;
        const again = record.state === EVENT_STATE.queued && record.loadedBy === take.owner;
        if (!first && !again) continue;
      }
      this.records.set(id, {
        ...record,
        state: EVENT_STATE.queued,
        [take.overdueBefore === undefined ? 'loadedAt' : 'sweptAt']: take.now,
        queuedBy: take.queuedBy,
        loadedBy: take.owner,
      });
      taken.push(this.withPayload(record));
    }
    return taken;
  }

  async endEmissions(ends: readonly EmissionEnding[]): Promise<EndsRecorded> {
    this.called('endEmissions');
    const { heldEndWrites } = this;
    if (heldEndWrites === undefined) return this.end(ends);
    return new Promise((resolve, reject) => {
      heldEndWrites.push({ ends, answer: (as) => resolve({ ...this.end(ends), ...as }), fail: reject });
    });
  }

  /**
   * From now on, each end write waits until the test answers it: as the store would write it, or
   * with the outcomes the test gives; or fails it.
   */
  holdEndWrites(): readonly HeldEndWrite[] {
    this.heldEndWrites = [];
    return this.heldEndWrites;
  }

  private end(ends: readonly EmissionEnding[]): EndsRecorded {
    const recorded: EmissionEnding[] = [];
    const alreadyEnded: EmissionEnding[] = [];
    const applied: EmissionEnding[] = [];
    for (const ending of ends) {
      const { event, end } = ending;
      const record = this.records.get(event.id);
      if (record?.state !== EVENT_STATE.queued || record.version !== event.version) {
        (record?.endedBy === ending.endedBy ? recorded : alreadyEnded).push(ending);
        continue;
      }
      this.records.set(event.id, {
        ...record,
        state: end.state,
        ...(end.state === 'emitted' ? { emittedAt: end.at } : { failedAt: end.at, reason: end.reason }),
        expiresAt: ending.expiresAt,
        endedBy: ending.endedBy,
        tenantShard: ending.listedUnder ?? record.tenantShard,
      });
      applied.push(ending);
      recorded.push(ending);
    }
    return { recorded, alreadyEnded, unknown: [], applied };
  }

  /** Every increment of the ends' counts, as written. */
  readonly endCounts: EndCountIncrement[] = [];

  async countEnds(increments: readonly EndCountIncrement[]): Promise<void> {
    this.called('countEnds');
    this.endCounts.push(...increments);
  }

  async releasePlaces(freed: ReadonlyMap<string, number>): Promise<readonly Unreleased[]> {
    this.called('releasePlaces');
    for (const [tenant, count] of freed) this.openEvents.set(tenant, (this.openEvents.get(tenant) ?? 0) - count);
    return [];
  }

  private changeable(id: string, scope: ChangeScope): StoredRecord | undefined {
    const record = this.records.get(id);
    if (
      record === undefined ||
      record.tenant !== scope.tenant ||
      !isOpen(record.state) ||
      (record.state !== EVENT_STATE.held && record.dueAt <= this.clock.now() + scope.cutoffMs)
    )
      return undefined;
    return record;
  }

  async cancel(
    id: string,
    scope: ChangeScope,
    change: ChangeRequest & { readonly expiresAt: number },
  ): Promise<{ readonly outcome: 'cancelled' } | ChangeRefused> {
    this.called('cancel');
    const record = this.changeable(id, scope);
    if (record === undefined || this.refuseCancels > 0) {
      this.refuseCancels = Math.max(0, this.refuseCancels - 1);
      return { outcome: 'refused', current: this.records.get(id) };
    }
    this.records.set(id, {
      ...record,
      state: EVENT_STATE.cancelled,
      cancelledAt: this.clock.now(),
      cancelledBy: change.by,
      expiresAt: change.expiresAt,
      tenantShard: unheldKey(record),
    });
    this.openEvents.set(record.tenant, (this.openEvents.get(record.tenant) ?? 0) - 1);
    return { outcome: 'cancelled' };
  }

  async reschedule(
    id: string,
    scope: ChangeScope,
    change: ChangeRequest & {
      readonly dueAt: number;
      readonly placement: Placement;
      readonly queuedBy: string;
      readonly expiresAt: number;
    },
  ): Promise<{ readonly outcome: 'rescheduled'; readonly event: ScheduledEvent | undefined } | ChangeRefused> {
    this.called('reschedule');
    const record = this.changeable(id, scope);
    const applied = record !== undefined && !followsLastChange({ at: record.lastChangeAt, by: record.lastChangeBy }, change);
    if (record === undefined || applied || (record.payloadKept === 'queue' && record.queuedBy === undefined))
      return { outcome: 'refused', current: this.records.get(id) };
    if (record.payloadKept === 'queue') {
      this.records.set(id, {
        ...record,
        dueAt: change.dueAt,
        version: record.version + 1,
        rescheduledAt: this.clock.now(),
        expiresAt: change.expiresAt,
        carriedBy: record.carriedBy ?? record.queuedBy,
        lastChangeBy: change.by,
        lastChangeAt: change.publishedAt,
      });
      return { outcome: 'rescheduled', event: undefined };
    }
    const queued = change.placement.state === EVENT_STATE.queued;
    const moved = {
      ...record,
      dueAt: change.dueAt,
      version: record.version + 1,
      state: change.placement.state,
      rescheduledAt: this.clock.now(),
      expiresAt: change.expiresAt,
      loadedBy: undefined,
      queuedBy: queued ? change.queuedBy : undefined,
      tenantShard: tenantShardKey(record.tenant, 's', change.placement.shard),
      lastChangeBy: change.by,
      lastChangeAt: change.publishedAt,
    };
    this.records.set(id, moved);
    return { outcome: 'rescheduled', event: this.withPayload(moved) };
  }

  async hold(
    record: EventRecord,
    from: string,
    hold: { readonly payload: string; readonly heldKey: string; readonly now: number },
  ): Promise<HoldOutcome> {
    this.called('hold');
    const current = this.records.get(record.id);
    if (current?.state !== EVENT_STATE.queued || current.version !== record.version || current.queuedBy !== from) return 'changed';
    if (!this.pauses.has(record.tenant) && !this.operatorPauses.has(record.tenant)) return 'not-paused';
    this.records.set(record.id, {
      ...current,
      state: EVENT_STATE.held,
      heldAt: hold.now,
      payload: hold.payload,
      payloadKept: 'record',
      tenantShard: hold.heldKey,
      queuedBy: undefined,
      loadedBy: undefined,
      expiresAt: Number.NaN,
    });
    return 'held';
  }

  async carry(record: EventRecord, from: string, onward: Carry, now: number): Promise<boolean> {
    this.called('carry');
    const current = this.records.get(record.id);
    if (current?.state !== EVENT_STATE.queued || current.version !== record.version || current.carriedBy !== from) return false;
    if (onward.to === 'queue') {
      this.records.set(record.id, { ...current, queuedBy: onward.queuedBy, carriedAt: now, carriedBy: undefined });
      return true;
    }
    const carried: StoredRecord = {
      ...current,
      state: EVENT_STATE.scheduled,
      carriedToTableAt: now,
      tenantShard: onward.tenantShard,
      carriedBy: undefined,
      queuedBy: undefined,
    };
    this.records.set(record.id, this.withStored(carried, onward.payload));
    return true;
  }

  private withPayload(record: EventRecord): ScheduledEvent {
    return eventOf(record, record.payload ?? this.payloads.get(record.id) ?? '');
  }
}

/** The tenant index over the store's records, by their tenant shard. */
export class MemoryDueIndex implements DueIndex {
  /** Queries made: what a tick costs. */
  queries = 0;
  /** Pages read, over all queries: a query's reader may stop before its last. */
  pagesRead = 0;

  /** `pageSize`: the entries of one page of a query, as DynamoDB pages a query's results (all in one by default). */
  constructor(
    private readonly store: MemoryEventStore,
    private readonly pageSize = Number.POSITIVE_INFINITY,
  ) {}

  async *query(partitionKey: string, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]> {
    this.queries += 1;
    const refs = [...this.store.records.values()]
      .filter((record) => record.tenantShard === partitionKey && record.dueAt >= fromMs && record.dueAt < untilMs)
      .sort(compareByDue)
      .map(({ id, dueAt }) => ({ id, dueAt }));
    for (let start = 0; start === 0 || start < refs.length; start += this.pageSize) {
      this.pagesRead += 1;
      yield refs.slice(start, start + this.pageSize);
    }
  }

  /** Through the adapters' merge, each partition read `pageSize` entries at a time, as DynamoDB pages a query's results. */
  async page(partitionKeys: readonly string[], after: DueEventRef | undefined, limit: number): Promise<readonly DueEventRef[]> {
    this.queries += partitionKeys.length;
    const open = (key: string) => {
      const refs = [...this.store.records.values()]
        .filter((record) => record.tenantShard === key && record.dueAt >= (after?.dueAt ?? 0))
        .sort((a, b) => a.dueAt - b.dueAt)
        .map(({ id, dueAt }) => ({ id, dueAt }));
      let next = 0;
      return async () => {
        this.pagesRead += 1;
        const entries = refs.slice(next, next + this.pageSize);
        next += entries.length;
        return { entries, done: next >= refs.length };
      };
    };
    return new DuePartitionsMerge(partitionKeys, open, after).take(limit);
  }
}

/** The operators' reads over the store's records: a listing of what the tenant index holds, in its order, and a count of a tenant's open events. */
export class MemoryEventListing implements EventListing, OpenEventsCensus {
  constructor(private readonly store: MemoryEventStore) {}

  async countOpen(tenant: string): Promise<number> {
    return [...this.store.records.values()].filter((record) => record.tenant === tenant && isOpen(record.state)).length;
  }

  async get(id: string): Promise<EventRecord | undefined> {
    return this.store.records.get(id);
  }

  async listEvents(tenant: string, query: EventsQuery): Promise<EventsPage> {
    const after = query.after === undefined ? undefined : decodePageToken(query.after);
    const states = query.states ?? OPEN_STATES;
    const matching = [...this.store.records.values()]
      .filter(
        (record) =>
          record.tenant === tenant &&
          // Without a label, what the tenant index lists; with one, what its label entries do (whatever the record's own key).
          (query.label === undefined ? record.tenantShard !== undefined : (record.labels ?? []).includes(query.label)) &&
          states.includes(record.state) &&
          record.dueAt >= (query.from ?? Number.NEGATIVE_INFINITY) &&
          record.dueAt < (query.to ?? Number.POSITIVE_INFINITY) &&
          isAfter(record, after),
      )
      .sort(compareByDue);
    const events = matching.slice(0, query.limit);
    const last = events.at(-1);
    return { events, next: matching.length > query.limit && last !== undefined ? encodePageToken(last) : undefined };
  }
}

/** The tenants' open-events counters, the store's, as the operators' tools read and correct them; each correction kept. */
export class MemoryOpenEventsCounter implements OpenEventsCounter {
  readonly corrections: { readonly tenant: string; readonly delta: number }[] = [];

  constructor(private readonly store: MemoryEventStore) {}

  async openEvents(tenant: string): Promise<number> {
    return this.store.openEvents.get(tenant) ?? 0;
  }

  async correctOpenEvents(tenant: string, delta: number): Promise<void> {
    this.corrections.push({ tenant, delta });
    this.store.openEvents.set(tenant, (this.store.openEvents.get(tenant) ?? 0) + delta);
  }
}

/** Tenants' pauses, on the store's counters (the hold checks them there). */
export class MemoryTenantPauses implements TenantPauses {
  constructor(private readonly store: MemoryEventStore) {}

  async pause(
    tenant: string,
    author: PauseAuthor,
    pause: { readonly pausedAt: number; readonly note: string | undefined },
  ): Promise<boolean> {
    if (!this.ordered(tenant, author)) return false;
    const slot = this.slot(author.owner);
    const pausedBy = author.owner === 'tenant' ? author.request.by : author.name;
    this.store.pauseMarks.set(tenant, pause.pausedAt);
    slot.set(tenant, { pausedAt: slot.get(tenant)?.pausedAt ?? pause.pausedAt, note: pause.note, pausedBy, owner: author.owner });
    return true;
  }

  async resume(tenant: string, author: PauseAuthor, now: number): Promise<ResumeOutcome> {
    const marked = this.store.pauseMarks.get(tenant);
    if (marked !== undefined && this.ordered(tenant, author, false)) this.store.pauseMarks.set(tenant, now);
    const stillPaused = () => this.slot(author.owner === 'tenant' ? 'operator' : 'tenant').get(tenant);
    if (!this.ordered(tenant, author))
      return {
        applied: this.store.pauseChanges.get(tenant)?.by === (author.owner === 'tenant' ? author.request.by : undefined),
        ended: undefined,
        stillPaused: stillPaused(),
      };
    const ended = this.slot(author.owner).get(tenant);
    this.slot(author.owner).delete(tenant);
    return { applied: true, ended, stillPaused: stillPaused() };
  }

  async paused(tenants: readonly string[]): Promise<ReadonlyMap<string, Pause>> {
    return new Map(
      tenants.flatMap((tenant) => {
        const pause = this.store.operatorPauses.get(tenant) ?? this.store.pauses.get(tenant);
        return pause === undefined ? [] : [[tenant, pause]];
      }),
    );
  }

  async lastChange(tenant: string): Promise<string | undefined> {
    return this.store.pauseChanges.get(tenant)?.by;
  }

  async pauseMarks(): Promise<readonly PauseMark[]> {
    return [...this.store.pauseMarks].map(([tenant, stamp]) => ({ tenant, stamp }));
  }

  async clearPauseMark(mark: PauseMark): Promise<void> {
    const paused = this.store.pauses.has(mark.tenant) || this.store.operatorPauses.has(mark.tenant);
    if (!paused && this.store.pauseMarks.get(mark.tenant) === mark.stamp) this.store.pauseMarks.delete(mark.tenant);
  }

  private slot(owner: PauseOwner): Map<string, Pause> {
    return owner === 'tenant' ? this.store.pauses : this.store.operatorPauses;
  }

  /** A tenant's request applies in its publish order (and records its place, unless `record` is false); an operator's as it comes. */
  private ordered(tenant: string, author: PauseAuthor, record = true): boolean {
    if (author.owner === 'operator') return true;
    if (!followsLastChange(this.store.pauseChanges.get(tenant) ?? {}, author.request)) return false;
    if (record) this.store.pauseChanges.set(tenant, { at: author.request.publishedAt, by: author.request.by });
    return true;
  }
}

export class MemoryLoaderCursors implements LoaderCursors {
  progress: {
    loadedThroughMs: number | undefined;
    repairedThroughMs: number | undefined;
    dueDirectoryComplete: boolean;
    backfill: DueDirectoryBackfillProgress;
  } = {
    loadedThroughMs: undefined,
    repairedThroughMs: undefined,
    dueDirectoryComplete: false,
    backfill: { startsAt: undefined, from: undefined },
  };

  async read(): Promise<LoaderProgress> {
    return { ...this.progress };
  }

  async advance(cursor: LoaderCursor, toMs: number): Promise<void> {
    this.progress[cursor] = Math.max(this.progress[cursor] ?? toMs, toMs);
  }

  async saveBackfill(backfill: DueDirectoryBackfillProgress): Promise<void> {
    this.progress.backfill = backfill;
  }

  async markDueDirectoryComplete(): Promise<void> {
    this.progress.dueDirectoryComplete = true;
  }
}

/** The backfill over the store's records, `pageSize` ids a page in id order, as a scan pages a table. */
export class MemoryDueDirectoryBackfill implements DueDirectoryBackfill {
  pages = 0;

  constructor(
    private readonly store: MemoryEventStore,
    private readonly directory: DueDirectory,
    private readonly now: () => number,
    private readonly pageSize = 2,
  ) {}

  async page(from: string | undefined): Promise<string | undefined> {
    this.pages += 1;
    const ids = [...this.store.records.keys()].sort().filter((id) => from === undefined || id > from);
    const page = ids.slice(0, this.pageSize).map((id) => this.store.records.get(id) as StoredRecord);
    const familyOf = (record: StoredRecord) => storedOrHeldPartition(record.tenantShard ?? '')?.family;
    await this.directory.note(page.filter((record) => familyOf(record) === 's'));
    for (const record of page)
      if (familyOf(record) === 'h' && !this.store.pauseMarks.has(record.tenant)) this.store.pauseMarks.set(record.tenant, this.now());
    return ids.length > this.pageSize ? page.at(-1)?.id : undefined;
  }
}

/** The due directory: the tenants noted for each period, and how often it was read. */
export class MemoryDueDirectory implements DueDirectory {
  readonly noted = new Map<number, Set<string>>();
  reads = 0;

  async note(entries: readonly DueEntry[]): Promise<void> {
    for (const { tenant, dueAt } of entries) {
      const period = dueDirectoryPeriodOf(dueAt);
      this.noted.set(period, (this.noted.get(period) ?? new Set()).add(tenant));
    }
  }

  async tenantsBetween(fromMs: number, untilMs: number): Promise<ReadonlySet<string>> {
    this.reads += 1;
    return new Set(dueDirectoryPeriodsBetween(fromMs, untilMs).flatMap((period) => [...(this.noted.get(period) ?? [])]));
  }
}

export class MemoryNoticeMarks implements NoticeMarks {
  /** Each marked notice's sentAt. */
  readonly marked = new Map<string, number>();

  async sent(noticeIds: readonly string[]): Promise<ReadonlySet<string>> {
    return new Set(noticeIds.filter((id) => this.marked.has(id)));
  }

  async markSent(noticeId: string, sentAt: number): Promise<'marked' | 'marked-before'> {
    if (this.marked.has(noticeId)) return 'marked-before';
    this.marked.set(noticeId, sentAt);
    return 'marked';
  }
}

/** A label entry: the tenant's, under one label, naming an event or a series at a due time. */
export interface LabelEntry {
  readonly tenant: string;
  readonly label: string;
  readonly id: string;
  readonly dueAt: number;
}

/**
 * The tenant index's label entries, keyed by tenant: one per label of each of the store's records
 * (what its create writes, moved with its reschedule, kept as long as the record), those of the
 * series a series store wrote, and those a test places itself.
 */
export class MemoryLabelledEvents implements LabelledEvents {
  /** Entries placed by the test: for records it seeded, or entries no record matches. */
  readonly entries: LabelEntry[] = [];
  /** Pages asked for: what a job costs in queries. */
  readonly queries: LabelledEventsQuery[] = [];

  constructor(
    private readonly store: MemoryEventStore,
    private readonly series?: { readonly labelEntries: readonly LabelEntry[]; readonly records: ReadonlyMap<string, SeriesRecord> },
  ) {}

  /** Labels an event of the store, as ingest would have when it recorded it. */
  label(record: Pick<EventRecord, 'id' | 'tenant' | 'dueAt'>, label: string): void {
    this.entries.push({ tenant: record.tenant, label, id: record.id, dueAt: record.dueAt });
  }

  async page(query: LabelledEventsQuery): Promise<readonly JobPosition[]> {
    this.queries.push(query);
    const { after, beforeMs } = query;
    const candidates = query.label === undefined ? this.indexEntries() : this.labelEntries();
    return candidates
      .filter(
        (entry) =>
          entry.tenant === query.tenant &&
          entry.label === query.label &&
          entry.dueAt >= query.fromMs &&
          (beforeMs === undefined || entry.dueAt < beforeMs) &&
          isAfter(entry, after),
      )
      .map(({ dueAt, id }) => ({ dueAt, id }))
      .sort(compareByDue)
      .slice(0, query.limit);
  }

  private labelEntries(): readonly { readonly tenant: string; readonly label?: string; readonly id: string; readonly dueAt: number }[] {
    const written = [...this.store.records.values()].flatMap(({ tenant, labels, id, dueAt }) =>
      (labels ?? []).map((label) => ({ tenant, label, id, dueAt })),
    );
    return [...this.entries, ...(this.series?.labelEntries ?? []), ...written];
  }

  /** The tenant index without a label: the events with a key in it, and the active series at their next due time. */
  private indexEntries(): readonly { readonly tenant: string; readonly label?: string; readonly id: string; readonly dueAt: number }[] {
    const events = [...this.store.records.values()].filter(({ tenantShard }) => tenantShard !== undefined);
    const series = [...(this.series?.records.values() ?? [])].flatMap(({ state, tenant, id, dueAt }) =>
      state === SERIES_STATE.active && dueAt !== undefined ? [{ tenant, id, dueAt }] : [],
    );
    return [...events.map(({ tenant, id, dueAt }) => ({ tenant, id, dueAt })), ...series];
  }
}

/** The jobs' items: a create once per id, a step only from the cursor it started at. */
export class MemoryBulkCancelJobs implements BulkCancelJobs {
  readonly jobs = new Map<string, BulkCancelJob>();
  /** Steps refused because the cursor had moved. */
  refusedSteps = 0;

  async create(job: NewBulkCancelJob): Promise<{ readonly created: boolean; readonly job: BulkCancelJob }> {
    const existing = this.jobs.get(job.jobId);
    if (existing !== undefined) return { created: false, job: existing };
    const created: BulkCancelJob = {
      ...job,
      state: 'running',
      cursor: JOB_CURSOR.start,
      movedBy: undefined,
      counts: NO_COUNTS,
      doneAt: undefined,
    };
    this.jobs.set(job.jobId, created);
    return { created: true, job: created };
  }

  async get(jobId: string): Promise<BulkCancelJob | undefined> {
    return this.jobs.get(jobId);
  }

  async advance(jobId: string, step: JobStep): Promise<boolean> {
    const job = this.jobs.get(jobId);
    if (job === undefined || job.cursor !== step.from) {
      this.refusedSteps += 1;
      return false;
    }
    this.jobs.set(jobId, {
      ...job,
      cursor: step.to,
      movedBy: step.movedBy,
      counts: addCounts(job.counts, step.counts),
      state: step.done ? 'done' : 'running',
      doneAt: step.done ? step.now : job.doneAt,
      expiresAt: step.expiresAt,
    });
    return true;
  }
}
