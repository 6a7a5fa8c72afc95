import { systemClock } from '../src/adapters/system-clock.js';
import type {
  ChangeRefused,
  ChangeRequest,
  ChangeScope,
  Clock,
  CreateOutcome,
  DueEventRef,
  DueIndex,
  EndsRecorded,
  EventStore,
  LoaderCursors,
  LoaderProgress,
  LoadingTake,
  NewEvent,
  NoticeClaim,
  NoticeClaims,
  Placement,
  Requeue,
  Unreleased,
} from '../src/app/ports.js';
import type { EmissionEnding } from '../src/domain/emission.js';
import type { ScheduledEvent } from '../src/domain/event.js';
import { EVENT_STATE, eventOf, isOpen, placedOnDelayQueueBy, type EventRecord } from '../src/domain/lifecycle.js';

/**
 * The table in memory, one fake for each port the adapters implement over it, with the adapters'
 * semantics: the unit tests of every stage share them, and can inspect or seed them.
 */

/** An end write held until the test answers it (see MemoryEventStore.holdEndWrites). */
export interface HeldEndWrite {
  readonly ends: readonly EmissionEnding[];
  answer(as?: Partial<EndsRecorded>): void;
  fail(error: Error): void;
}

/** The event store: conditional creates, takes, ends, changes and quotas. */
export class MemoryEventStore implements EventStore {
  readonly records = new Map<string, EventRecord & { readonly bucketShard?: string | undefined }>();
  readonly payloads = new Map<string, string>();
  readonly openEvents = new Map<string, number>();
  private heldEndWrites: HeldEndWrite[] | undefined;
  /** Requests the store served, by method: what a stage costs in store calls. */
  readonly calls: Record<string, number> = {};

  /** What a change's cutoff is checked against, as the adapter checks it when it writes. */
  constructor(private readonly clock: Clock = systemClock) {}

  private called(method: string): void {
    this.calls[method] = (this.calls[method] ?? 0) + 1;
  }

  /** Seeds a record (e.g. one in an older shape, or an event queued by another path). */
  put(record: EventRecord & { readonly bucketShard?: string | undefined }, payload?: string): void {
    this.records.set(record.id, record);
    if (payload !== undefined) this.payloads.set(record.id, payload);
  }

  async createMany(entries: readonly NewEvent[]): Promise<CreateOutcome[]> {
    this.called('createMany');
    const outcomes: CreateOutcome[] = [];
    for (const entry of entries) {
      const { event, quotas, placement } = entry;
      const existing = this.records.get(event.id);
      if (existing !== undefined) {
        outcomes.push({ outcome: 'duplicate', existing });
        continue;
      }
      const open = this.openEvents.get(event.tenant) ?? 0;
      if (open >= quotas.maxOpenEvents) {
        outcomes.push({ outcome: 'quota-exceeded', quota: 'maxOpenEvents' });
        continue;
      }
      this.openEvents.set(event.tenant, open + 1);
      const { payload, ...rest } = event;
      const queued = placement.state === EVENT_STATE.queued;
      this.records.set(event.id, {
        ...rest,
        state: placement.state,
        payloadKept: queued ? 'queue' : 'item',
        clientId: entry.clientId,
        inputMessageId: entry.inputMessageId,
        requestHash: entry.requestHash,
        queuedBy: entry.queuedBy,
        createdAt: entry.now,
        createdBy: entry.createdBy,
        queuedAt: queued ? entry.now : undefined,
        bucketShard: queued ? undefined : placement.bucketShard,
        expiresAt: entry.expiresAt,
      });
      if (!queued) this.payloads.set(event.id, payload);
      outcomes.push({ outcome: 'created' });
    }
    return outcomes;
  }

  async requeue(id: string, requeue: Requeue): Promise<boolean> {
    this.called('requeue');
    const record = this.records.get(id);
    if (record === undefined || record.version !== requeue.version || placedOnDelayQueueBy(record) !== requeue.placedBy) return false;
    this.records.set(id, { ...record, queuedBy: requeue.queuedBy, queuedAt: requeue.now });
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
        if (!isOpen(record.state) || record.dueAt >= take.overdueBefore || record.payloadKept === 'queue') continue;
      } else {
        if (record.dueAt >= take.horizonMs) continue;
        const first = record.state === EVENT_STATE.scheduled && record.loadedBy === undefined;
        const again = record.state === EVENT_STATE.queued && record.loadedBy === take.owner;
        if (!first && !again) continue;
      }
      this.records.set(id, { ...record, state: EVENT_STATE.queued, queuedAt: take.now, queuedBy: take.queuedBy, loadedBy: take.owner });
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
      });
      applied.push(ending);
      recorded.push(ending);
    }
    return { recorded, alreadyEnded, unknown: [], applied };
  }

  async releasePlaces(freed: ReadonlyMap<string, number>): Promise<readonly Unreleased[]> {
    this.called('releasePlaces');
    for (const [tenant, count] of freed) this.openEvents.set(tenant, (this.openEvents.get(tenant) ?? 0) - count);
    return [];
  }

  private changeable(id: string, scope: ChangeScope): (EventRecord & { readonly bucketShard?: string | undefined }) | undefined {
    const record = this.records.get(id);
    if (
      record === undefined ||
      record.tenant !== scope.tenant ||
      !isOpen(record.state) ||
      record.dueAt <= this.clock.now() + scope.cutoffMs
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
    if (record === undefined) return { outcome: 'refused', current: this.records.get(id) };
    this.records.set(id, {
      ...record,
      state: EVENT_STATE.cancelled,
      cancelledAt: this.clock.now(),
      cancelledBy: change.by,
      expiresAt: change.expiresAt,
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
  ): Promise<{ readonly outcome: 'rescheduled'; readonly event: ScheduledEvent } | ChangeRefused> {
    this.called('reschedule');
    const record = this.changeable(id, scope);
    const applied =
      record?.lastChangeAt !== undefined &&
      (record.lastChangeAt > change.publishedAt || (record.lastChangeAt === change.publishedAt && record.lastChangeBy === change.by));
    if (record === undefined || record.payloadKept === 'queue' || applied) return { outcome: 'refused', current: this.records.get(id) };
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
      queuedAt: queued ? this.clock.now() : record.queuedAt,
      bucketShard: change.placement.bucketShard,
      lastChangeBy: change.by,
      lastChangeAt: change.publishedAt,
    };
    this.records.set(id, moved);
    return { outcome: 'rescheduled', event: this.withPayload(moved) };
  }

  private withPayload(record: EventRecord): ScheduledEvent {
    return eventOf(record, record.payload ?? this.payloads.get(record.id) ?? '');
  }
}

/** The due index over the store's records: those with a bucket shard (stored for the loader). */
export class MemoryDueIndex implements DueIndex {
  /** Queries made: what a tick costs. */
  queries = 0;

  constructor(private readonly store: MemoryEventStore) {}

  async *query(bucketShard: string, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]> {
    this.queries += 1;
    yield [...this.store.records.values()]
      .filter((record) => record.bucketShard === bucketShard && record.dueAt >= fromMs && record.dueAt < untilMs)
      .map(({ id, dueAt }) => ({ id, dueAt }));
  }
}

export class MemoryLoaderCursors implements LoaderCursors {
  progress: { loadedThroughMs: number | undefined; repairedThroughMs: number | undefined } = {
    loadedThroughMs: undefined,
    repairedThroughMs: undefined,
  };

  async read(): Promise<LoaderProgress> {
    return { ...this.progress };
  }

  async advance(cursor: keyof LoaderProgress, toMs: number): Promise<void> {
    this.progress[cursor] = Math.max(this.progress[cursor] ?? toMs, toMs);
  }
}

export class MemoryNoticeClaims implements NoticeClaims {
  readonly notices = new Map<string, { owner?: string | undefined; until?: number | undefined; sentAt?: number | undefined }>();

  async claim(noticeId: string, claim: NoticeClaim): Promise<'claimed' | 'ended' | 'busy'> {
    const notice = this.notices.get(noticeId) ?? {};
    if (notice.sentAt !== undefined) return 'ended';
    if (notice.until !== undefined && notice.until >= claim.now && notice.owner !== claim.owner) return 'busy';
    this.notices.set(noticeId, { ...notice, owner: claim.owner, until: claim.leaseUntil });
    return 'claimed';
  }

  async release(noticeId: string, owner: string): Promise<void> {
    const notice = this.notices.get(noticeId);
    if (notice?.owner === owner) this.notices.set(noticeId, { ...notice, owner: undefined, until: undefined });
  }

  async markSent(noticeId: string, sentAt: number): Promise<void> {
    this.notices.set(noticeId, { ...this.notices.get(noticeId), sentAt });
  }
}
